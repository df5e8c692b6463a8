/* nn.c - the C library's layers (lt_module), optimizers, losses,
 * functional nn ops, learning-rate schedules, safetensors and the IDX
 * dataset loader, as objects and functions of lazytensor._C. */
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

static PyObject *wrap_module(lt_module *m)
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

static PyObject *module_forward(PyObject *self, PyObject *x)
{
    lt_tensor *t = ltpy_tensor_arg(x, "input");
    return t ? ltpy_wrap(lt_module_forward(MOD(self), t)) : NULL;
}

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

static PyObject *module_train(PyObject *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    lt_module_train(MOD(self), on);
    Py_RETURN_NONE;
}

static PyObject *module_to(PyObject *self, PyObject *arg)
{
    lt_device d;
    if (ltpy_parse_device(arg, &d) < 0 || ltpy_check(lt_module_to(MOD(self), d)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *module_kind(PyObject *self, void *c)
{
    (void)c;
    const char *k = lt_module_kind(MOD(self));
    return k ? PyUnicode_FromString(k) : ltpy_raise();
}

static PyMethodDef module_methods[] = {
    {"forward", module_forward, METH_O, NULL},
    {"state", module_state, METH_VARARGS, NULL},
    {"train", module_train, METH_O, NULL},
    {"to", module_to, METH_O, NULL},
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

/* ---- layer constructors ----------------------------------------------------- */

static PyObject *n_linear(PyObject *self, PyObject *args)
{
    (void)self;
    long long in, out;
    int bias;
    PyObject *dev;
    lt_device d;
    if (!PyArg_ParseTuple(args, "LLpO", &in, &out, &bias, &dev) || ltpy_parse_device(dev, &d) < 0)
        return NULL;
    return wrap_module(lt_nn_linear(in, out, bias, d));
}

static PyObject *n_conv2d(PyObject *self, PyObject *args)
{
    (void)self;
    long long in, out, k, stride, pad, groups;
    int bias;
    PyObject *dev;
    lt_device d;
    if (!PyArg_ParseTuple(args, "LLLLLLpO", &in, &out, &k, &stride, &pad, &groups, &bias, &dev) ||
        ltpy_parse_device(dev, &d) < 0)
        return NULL;
    return wrap_module(lt_nn_conv2d(in, out, k, stride, pad, groups, bias, d));
}

/* Layers of (size, eps, device). */
static PyObject *normalize(PyObject *args, lt_module *(*f)(int64_t, double, lt_device))
{
    long long n;
    double eps;
    PyObject *dev;
    lt_device d;
    if (!PyArg_ParseTuple(args, "LdO", &n, &eps, &dev) || ltpy_parse_device(dev, &d) < 0)
        return NULL;
    return wrap_module(f(n, eps, d));
}
static PyObject *n_layer_norm(PyObject *s, PyObject *a) { (void)s; return normalize(a, lt_nn_layer_norm); }
static PyObject *n_batch_norm2d(PyObject *s, PyObject *a) { (void)s; return normalize(a, lt_nn_batch_norm2d); }

static PyObject *n_embedding(PyObject *self, PyObject *args)
{
    (void)self;
    long long num, dim;
    PyObject *dev;
    lt_device d;
    if (!PyArg_ParseTuple(args, "LLO", &num, &dim, &dev) || ltpy_parse_device(dev, &d) < 0)
        return NULL;
    return wrap_module(lt_nn_embedding(num, dim, d));
}

static PyObject *n_self_attention(PyObject *self, PyObject *args)
{
    (void)self;
    long long dim, heads;
    int causal;
    PyObject *dev;
    lt_device d;
    if (!PyArg_ParseTuple(args, "LLpO", &dim, &heads, &causal, &dev) || ltpy_parse_device(dev, &d) < 0)
        return NULL;
    return wrap_module(lt_nn_self_attention(dim, heads, causal, d));
}

static PyObject *n_pool(PyObject *args, lt_module *(*f)(int64_t))
{
    long long k;
    return PyArg_ParseTuple(args, "L", &k) ? wrap_module(f(k)) : NULL;
}
static PyObject *n_max_pool2d(PyObject *s, PyObject *a) { (void)s; return n_pool(a, lt_nn_max_pool2d); }
static PyObject *n_avg_pool2d(PyObject *s, PyObject *a) { (void)s; return n_pool(a, lt_nn_avg_pool2d); }

static PyObject *n_dropout(PyObject *self, PyObject *args)
{
    (void)self;
    double p;
    return PyArg_ParseTuple(args, "d", &p) ? wrap_module(lt_nn_dropout(p)) : NULL;
}

#define SIMPLE(name)                                                  \
    static PyObject *n_##name(PyObject *self, PyObject *unused)       \
    {                                                                 \
        (void)self, (void)unused;                                     \
        return wrap_module(lt_nn_##name());                           \
    }
SIMPLE(flatten) SIMPLE(relu) SIMPLE(gelu) SIMPLE(silu) SIMPLE(tanh)
#undef SIMPLE

/* ---- losses and functional ops ------------------------------------------ */

static PyObject *n_cross_entropy(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x, *y;
    double smoothing = 0;
    if (!PyArg_ParseTuple(args, "OO|d", &x, &y, &smoothing))
        return NULL;
    lt_tensor *a = ltpy_tensor_arg(x, "input"), *b = a ? ltpy_tensor_arg(y, "target") : NULL;
    return b ? ltpy_wrap(lt_cross_entropy(a, b, smoothing)) : NULL;
}

typedef lt_tensor *(*pair_fn)(lt_tensor *, lt_tensor *);
static PyObject *tensor_pair(PyObject *args, pair_fn f)
{
    PyObject *x, *y;
    if (!PyArg_ParseTuple(args, "OO", &x, &y))
        return NULL;
    lt_tensor *a = ltpy_tensor_arg(x, "input"), *b = a ? ltpy_tensor_arg(y, "second argument") : NULL;
    return b ? ltpy_wrap(f(a, b)) : NULL;
}
static PyObject *n_nll_loss(PyObject *s, PyObject *a) { (void)s; return tensor_pair(a, lt_nll_loss); }
static PyObject *n_mse_loss(PyObject *s, PyObject *a) { (void)s; return tensor_pair(a, lt_mse_loss); }
static PyObject *n_embedding_fn(PyObject *s, PyObject *a) { (void)s; return tensor_pair(a, lt_embedding); }

static PyObject *n_one_hot(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x;
    long long n;
    if (!PyArg_ParseTuple(args, "OL", &x, &n))
        return NULL;
    lt_tensor *t = ltpy_tensor_arg(x, "input");
    return t ? ltpy_wrap(lt_one_hot(t, n)) : NULL;
}

/* conv2d(x, w, b_or_None, (sh, sw), (ph, pw), (dh, dw), groups) */
static PyObject *n_conv2d_fn(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *x, *w, *b;
    int64_t s[2], p[2], d[2];
    long long groups;
    if (!PyArg_ParseTuple(args, "OOO(LL)(LL)(LL)L", &x, &w, &b, &s[0], &s[1], &p[0], &p[1], &d[0], &d[1], &groups))
        return NULL;
    lt_tensor *xt = ltpy_tensor_arg(x, "input"), *wt = xt ? ltpy_tensor_arg(w, "weight") : NULL, *bt = NULL;
    if (!wt || (b != Py_None && !(bt = ltpy_tensor_arg(b, "bias"))))
        return NULL;
    return ltpy_wrap(lt_conv2d(xt, wt, bt, s, p, d, groups));
}

/* max_pool2d(x, (kh, kw), (sh, sw), (ph, pw)) / avg_pool2d(..., count_include_pad) */
static PyObject *n_pool_fn(PyObject *args, bool average)
{
    PyObject *x;
    int64_t k[2], s[2], p[2];
    int include_pad = 1;
    if (!PyArg_ParseTuple(args, "O(LL)(LL)(LL)|p", &x, &k[0], &k[1], &s[0], &s[1], &p[0], &p[1], &include_pad))
        return NULL;
    lt_tensor *t = ltpy_tensor_arg(x, "input");
    if (!t)
        return NULL;
    return ltpy_wrap(average ? lt_avg_pool2d(t, k, s, p, include_pad) : lt_max_pool2d(t, k, s, p, NULL));
}
static PyObject *n_max_pool2d_fn(PyObject *s, PyObject *a) { (void)s; return n_pool_fn(a, false); }
static PyObject *n_avg_pool2d_fn(PyObject *s, PyObject *a) { (void)s; return n_pool_fn(a, true); }

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

#define OPT(self) (((LtOptim *)(self))->o)

static PyObject *optim_step(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (ltpy_check(lt_optim_step(OPT(self))) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *optim_zero_grad(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (ltpy_check(lt_optim_zero_grad(OPT(self))) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *optim_get_lr(PyObject *self, void *c)
{
    (void)c;
    return PyFloat_FromDouble(lt_optim_lr(OPT(self)));
}

static int optim_set_lr(PyObject *self, PyObject *v, void *c)
{
    (void)c;
    double lr = v ? PyFloat_AsDouble(v) : -1;
    if (lr == -1 && PyErr_Occurred())
        return -1;
    return ltpy_check(lt_optim_set_lr(OPT(self), lr));
}

static PyMethodDef optim_methods[] = {
    {"step", optim_step, METH_NOARGS, NULL},
    {"zero_grad", optim_zero_grad, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef optim_getset[] = {
    {"lr", optim_get_lr, optim_set_lr, "learning rate", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LtOptim_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lazytensor._C.COptimizer",
    .tp_basicsize = sizeof(LtOptim),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = optim_dealloc,
    .tp_methods = optim_methods,
    .tp_getset = optim_getset,
    .tp_doc = "An optimizer of the C library (lt_optimizer).",
};

/* The handles of a sequence of tensors (borrowed; PyMem_Free the array). */
static lt_tensor **tensor_list(PyObject *seq, int *n)
{
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of tensors");
    if (!fast)
        return NULL;
    *n = (int)PySequence_Fast_GET_SIZE(fast);
    lt_tensor **ts = PyMem_Calloc((size_t)*n + 1, sizeof *ts);
    for (int i = 0; ts && i < *n; i++) {
        if (!(ts[i] = ltpy_tensor_arg(PySequence_Fast_GET_ITEM(fast, i), "every parameter"))) {
            PyMem_Free(ts);
            ts = NULL;
        }
    }
    if (!ts && !PyErr_Occurred())
        PyErr_NoMemory();
    Py_DECREF(fast); /* the caller's sequence keeps the tensors */
    return ts;
}

static PyObject *wrap_optim(lt_optimizer *o)
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

static PyObject *n_sgd(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *params;
    double lr, momentum, wd;
    int nesterov, n;
    if (!PyArg_ParseTuple(args, "Odddp", &params, &lr, &momentum, &wd, &nesterov))
        return NULL;
    lt_tensor **ts = tensor_list(params, &n);
    PyObject *r = ts ? wrap_optim(lt_optim_sgd(ts, n, lr, momentum, wd, nesterov)) : NULL;
    PyMem_Free(ts);
    return r;
}

static PyObject *n_adam(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *params;
    double lr, b1, b2, eps, wd;
    int decoupled, n;
    if (!PyArg_ParseTuple(args, "Odddddp", &params, &lr, &b1, &b2, &eps, &wd, &decoupled))
        return NULL;
    lt_tensor **ts = tensor_list(params, &n);
    PyObject *r = ts ? wrap_optim(lt_optim_adam(ts, n, lr, b1, b2, eps, wd, decoupled)) : NULL;
    PyMem_Free(ts);
    return r;
}

/* ---- schedules --------------------------------------------------------------- */

static PyObject *n_lr_step_decay(PyObject *self, PyObject *args)
{
    (void)self;
    double base, gamma;
    long long step, size;
    return PyArg_ParseTuple(args, "dLLd", &base, &step, &size, &gamma)
               ? PyFloat_FromDouble(lt_lr_step_decay(base, step, size, gamma))
               : NULL;
}

static PyObject *n_lr_cosine(PyObject *self, PyObject *args)
{
    (void)self;
    double base, min_lr;
    long long step, total;
    return PyArg_ParseTuple(args, "dLLd", &base, &step, &total, &min_lr)
               ? PyFloat_FromDouble(lt_lr_cosine(base, step, total, min_lr))
               : NULL;
}

static PyObject *n_lr_warmup(PyObject *self, PyObject *args)
{
    (void)self;
    double after;
    long long step, warm;
    return PyArg_ParseTuple(args, "dLL", &after, &step, &warm) ? PyFloat_FromDouble(lt_lr_warmup(after, step, warm))
                                                                : NULL;
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
    lt_tensor **ts = tensor_list(tensors, &n);
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
    F(linear) F(conv2d) F(layer_norm) F(batch_norm2d) F(embedding) F(self_attention) F(max_pool2d)
    F(avg_pool2d) F(dropout) F(cross_entropy) F(nll_loss) F(mse_loss) F(embedding_fn) F(one_hot)
    F(conv2d_fn) F(max_pool2d_fn) F(avg_pool2d_fn) F(sgd) F(adam) F(lr_step_decay) F(lr_cosine)
    F(lr_warmup) F(save_safetensors) F(load_safetensors) F(load_idx)
#undef F
#define N(name) {#name, n_##name, METH_NOARGS, NULL},
    N(flatten) N(relu) N(gelu) N(silu) N(tanh)
#undef N
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
