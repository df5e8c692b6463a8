/* methods.c - Tensor methods: elementwise ops, reductions, views and
 * shaping. Each is one call of the C API; argument conventions follow
 * PyTorch (dim=None reduces everything, negative dims count back). */
#include "ltpy.h"

#define SELF LTPY_TENSOR(self)

/* ---- elementwise: one C call each --------------------------------------- */

#define UNARY(name)                                                   \
    static PyObject *m_##name(PyObject *self, PyObject *unused)       \
    {                                                                 \
        (void)unused;                                                 \
        return ltpy_wrap(lt_##name(SELF));                            \
    }
UNARY(neg) UNARY(abs) UNARY(exp) UNARY(log) UNARY(log1p) UNARY(expm1) UNARY(sqrt) UNARY(rsqrt)
UNARY(sin) UNARY(cos) UNARY(tanh) UNARY(sigmoid) UNARY(relu) UNARY(gelu) UNARY(silu) UNARY(erf)
UNARY(sign) UNARY(floor) UNARY(ceil) UNARY(round) UNARY(reciprocal) UNARY(logical_not)
UNARY(clone) UNARY(contiguous) UNARY(detach) UNARY(nonzero) UNARY(squeeze_all)
#undef UNARY

/* In-place forms return self (the C call adds no reference). */
static PyObject *done_inplace(PyObject *self, lt_tensor *r)
{
    if (!r)
        return ltpy_raise();
    return Py_NewRef(self);
}

#define UNARY_(name)                                                  \
    static PyObject *m_##name##_(PyObject *self, PyObject *unused)    \
    {                                                                 \
        (void)unused;                                                 \
        return done_inplace(self, lt_##name##_(SELF));                \
    }
UNARY_(neg) UNARY_(relu) UNARY_(zero)
#undef UNARY_

static PyObject *m_fill_(PyObject *self, PyObject *v)
{
    double d = PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred())
        return NULL;
    return done_inplace(self, lt_fill_(SELF, d));
}

static PyObject *m_copy_(PyObject *self, PyObject *src)
{
    lt_tensor *s = ltpy_operand(src, SELF);
    if (!s)
        return NULL;
    PyObject *r = done_inplace(self, lt_copy_(SELF, s));
    lt_release(s);
    return r;
}

/* clamp(min=None, max=None) and clamp_ */
static int clamp_bounds(PyObject *args, PyObject *kw, double *lo, double *hi)
{
    PyObject *mn = Py_None, *mx = Py_None;
    static char *kwlist[] = {"min", "max", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO:clamp", kwlist, &mn, &mx))
        return -1;
    *lo = mn == Py_None ? -INFINITY : PyFloat_AsDouble(mn);
    *hi = mx == Py_None ? INFINITY : PyFloat_AsDouble(mx);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *m_clamp(PyObject *self, PyObject *args, PyObject *kw)
{
    double lo, hi;
    return clamp_bounds(args, kw, &lo, &hi) < 0 ? NULL : ltpy_wrap(lt_clamp(SELF, lo, hi));
}

static PyObject *m_clamp_(PyObject *self, PyObject *args, PyObject *kw)
{
    double lo, hi;
    return clamp_bounds(args, kw, &lo, &hi) < 0 ? NULL : done_inplace(self, lt_clamp_(SELF, lo, hi));
}

/* add(other, alpha) / sub: a + alpha*b with lt_add_scaled */
typedef lt_tensor *(*scaled_fn)(lt_tensor *, lt_tensor *, double);
static PyObject *scaled(PyObject *self, PyObject *args, scaled_fn f, bool in_place)
{
    PyObject *other;
    double alpha = 1;
    if (!PyArg_ParseTuple(args, "O|d", &other, &alpha))
        return NULL;
    lt_tensor *o = ltpy_operand(other, SELF);
    if (!o)
        return NULL;
    lt_tensor *r = f(SELF, o, alpha);
    lt_release(o);
    return in_place ? done_inplace(self, r) : ltpy_wrap(r);
}
static PyObject *m_add_scaled(PyObject *self, PyObject *a) { return scaled(self, a, lt_add_scaled, false); }
static PyObject *m_sub_scaled(PyObject *self, PyObject *a) { return scaled(self, a, lt_sub_scaled, false); }
static PyObject *m_add_scaled_(PyObject *self, PyObject *a) { return scaled(self, a, lt_add_scaled_, true); }
static PyObject *m_sub_scaled_(PyObject *self, PyObject *a) { return scaled(self, a, lt_sub_scaled_, true); }

/* Binary ops between tensors (the other may be a scalar, wrapped). */
#define BINARY(name)                                                  \
    static PyObject *m_##name(PyObject *self, PyObject *other)        \
    {                                                                 \
        lt_tensor *o = ltpy_operand(other, SELF);                     \
        if (!o)                                                       \
            return NULL;                                              \
        lt_tensor *r = lt_##name(SELF, o);                            \
        lt_release(o);                                                \
        return ltpy_wrap(r);                                          \
    }
BINARY(maximum) BINARY(minimum) BINARY(logical_and) BINARY(logical_or) BINARY(matmul)
#undef BINARY

/* ---- reductions ------------------------------------------------------------ */

typedef lt_tensor *(*reduce_fn)(lt_tensor *, const int *, int, bool);

static PyObject *reduce(PyObject *self, PyObject *args, PyObject *kw, reduce_fn f, const char *name)
{
    PyObject *dim = Py_None;
    int keepdim = 0, dims[LT_MAX_DIMS], n;
    static char *kwlist[] = {"dim", "keepdim", NULL};
    char fmt[32];
    PyOS_snprintf(fmt, sizeof fmt, "|Op:%s", name);
    if (!PyArg_ParseTupleAndKeywords(args, kw, fmt, kwlist, &dim, &keepdim) || ltpy_parse_dims(dim, dims, &n) < 0)
        return NULL;
    return ltpy_wrap(f(SELF, dims, n, keepdim));
}

#define REDUCE(name)                                                                \
    static PyObject *m_##name(PyObject *self, PyObject *args, PyObject *kw)          \
    {                                                                               \
        return reduce(self, args, kw, lt_##name, #name);                            \
    }
REDUCE(sum) REDUCE(mean) REDUCE(prod) REDUCE(amax) REDUCE(amin) REDUCE(all) REDUCE(any) REDUCE(logsumexp)
#undef REDUCE

/* var / std (dim=None, unbiased=True, keepdim=False, correction=None) */
typedef lt_tensor *(*moment_fn)(lt_tensor *, const int *, int, int64_t, bool);
static PyObject *moment(PyObject *self, PyObject *args, PyObject *kw, moment_fn f)
{
    PyObject *dim = Py_None, *correction = Py_None;
    int unbiased = 1, keepdim = 0, dims[LT_MAX_DIMS], n;
    static char *kwlist[] = {"dim", "unbiased", "keepdim", "correction", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OppO", kwlist, &dim, &unbiased, &keepdim, &correction) ||
        ltpy_parse_dims(dim, dims, &n) < 0)
        return NULL;
    long long c = correction == Py_None ? unbiased : PyLong_AsLongLong(correction);
    if (c == -1 && PyErr_Occurred())
        return NULL;
    return ltpy_wrap(f(SELF, dims, n, c, keepdim));
}
static PyObject *m_var(PyObject *self, PyObject *a, PyObject *k) { return moment(self, a, k, lt_var); }
static PyObject *m_std(PyObject *self, PyObject *a, PyObject *k) { return moment(self, a, k, lt_std); }

/* (values, indices) pairs of max/min over a dim, sort and topk */
static PyObject *pair(lt_tensor *values, lt_tensor *indices)
{
    if (!values) {
        lt_release(indices);
        return ltpy_raise();
    }
    PyObject *v = ltpy_wrap(values), *i = v ? ltpy_wrap(indices) : (lt_release(indices), NULL);
    if (!i) {
        Py_XDECREF(v);
        return NULL;
    }
    return Py_BuildValue("(NN)", v, i);
}

typedef lt_tensor *(*extreme_fn)(lt_tensor *, int, bool, lt_tensor **);
/* max() / max(dim, keepdim) -> (values, indices) / max(other) */
static PyObject *extreme(PyObject *self, PyObject *args, PyObject *kw, extreme_fn f, reduce_fn all,
                         lt_tensor *(*elementwise)(lt_tensor *, lt_tensor *))
{
    PyObject *dim = Py_None;
    int keepdim = 0;
    static char *kwlist[] = {"dim", "keepdim", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op", kwlist, &dim, &keepdim))
        return NULL;
    if (dim == Py_None)
        return ltpy_wrap(all(SELF, NULL, 0, false));
    if (ltpy_is_tensor(dim))
        return ltpy_wrap(elementwise(SELF, LTPY_TENSOR(dim)));
    int d = PyLong_AsLong(dim);
    if (d == -1 && PyErr_Occurred())
        return NULL;
    lt_tensor *idx = NULL, *v = f(SELF, d, keepdim, &idx);
    return pair(v, idx);
}
static PyObject *m_max(PyObject *self, PyObject *a, PyObject *k) { return extreme(self, a, k, lt_max_dim, lt_amax, lt_maximum); }
static PyObject *m_min(PyObject *self, PyObject *a, PyObject *k) { return extreme(self, a, k, lt_min_dim, lt_amin, lt_minimum); }

typedef lt_tensor *(*arg_fn)(lt_tensor *, int, bool);
static PyObject *argext(PyObject *self, PyObject *args, PyObject *kw, arg_fn f)
{
    PyObject *dim = Py_None;
    int keepdim = 0;
    static char *kwlist[] = {"dim", "keepdim", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op", kwlist, &dim, &keepdim))
        return NULL;
    if (dim != Py_None) {
        int d = PyLong_AsLong(dim);
        return d == -1 && PyErr_Occurred() ? NULL : ltpy_wrap(f(SELF, d, keepdim));
    }
    lt_tensor *flat = lt_reshape(SELF, (int64_t[]){-1}, 1); /* over all elements, like torch */
    lt_tensor *r = flat ? f(flat, 0, false) : NULL;
    lt_release(flat);
    return ltpy_wrap(r);
}
static PyObject *m_argmax(PyObject *self, PyObject *a, PyObject *k) { return argext(self, a, k, lt_argmax); }
static PyObject *m_argmin(PyObject *self, PyObject *a, PyObject *k) { return argext(self, a, k, lt_argmin); }

/* Ops of one int dim argument. */
#define DIM_OP(name, cfn)                                             \
    static PyObject *m_##name(PyObject *self, PyObject *arg)          \
    {                                                                 \
        int d = PyLong_AsLong(arg);                                   \
        if (d == -1 && PyErr_Occurred())                              \
            return NULL;                                              \
        return ltpy_wrap(cfn(SELF, d));                               \
    }
DIM_OP(cumsum, lt_cumsum) DIM_OP(softmax, lt_softmax) DIM_OP(log_softmax, lt_log_softmax)
DIM_OP(unsqueeze, lt_unsqueeze) DIM_OP(squeeze_dim, lt_squeeze)
#undef DIM_OP

static PyObject *m_sort(PyObject *self, PyObject *args, PyObject *kw)
{
    int dim = -1, descending = 0;
    static char *kwlist[] = {"dim", "descending", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|ip:sort", kwlist, &dim, &descending))
        return NULL;
    lt_tensor *idx = NULL, *v = lt_sort(SELF, dim, descending, &idx);
    return pair(v, idx);
}

static PyObject *m_topk(PyObject *self, PyObject *args, PyObject *kw)
{
    long long k;
    int dim = -1, largest = 1;
    static char *kwlist[] = {"k", "dim", "largest", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "L|ip:topk", kwlist, &k, &dim, &largest))
        return NULL;
    lt_tensor *idx = NULL, *v = lt_topk(SELF, k, dim, largest, &idx);
    return pair(v, idx);
}

/* ---- views and shaping -------------------------------------------------- */

/* view(*shape) / view((a, b)) */
static int shape_args(PyObject *args, int64_t *dims, int *nd)
{
    if (PyTuple_GET_SIZE(args) == 1 && !PyIndex_Check(PyTuple_GET_ITEM(args, 0)))
        return ltpy_parse_shape(PyTuple_GET_ITEM(args, 0), dims, nd);
    return ltpy_parse_shape(args, dims, nd);
}

typedef lt_tensor *(*shape_fn)(lt_tensor *, const int64_t *, int);
static PyObject *shaped(PyObject *self, PyObject *args, shape_fn f)
{
    int64_t dims[LT_MAX_DIMS];
    int nd;
    return shape_args(args, dims, &nd) < 0 ? NULL : ltpy_wrap(f(SELF, dims, nd));
}
static PyObject *m_view(PyObject *self, PyObject *a) { return shaped(self, a, lt_view); }
static PyObject *m_reshape(PyObject *self, PyObject *a) { return shaped(self, a, lt_reshape); }
static PyObject *m_expand(PyObject *self, PyObject *a) { return shaped(self, a, lt_expand); }

static PyObject *m_permute(PyObject *self, PyObject *args)
{
    int64_t d64[LT_MAX_DIMS];
    int perm[LT_MAX_DIMS], nd;
    if (shape_args(args, d64, &nd) < 0)
        return NULL;
    for (int i = 0; i < nd; i++)
        perm[i] = (int)d64[i];
    return ltpy_wrap(lt_permute(SELF, perm, nd));
}

static PyObject *m_transpose(PyObject *self, PyObject *args)
{
    int d0, d1;
    return PyArg_ParseTuple(args, "ii:transpose", &d0, &d1) ? ltpy_wrap(lt_transpose(SELF, d0, d1)) : NULL;
}

static PyObject *m_t(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (lt_tensor_ndim(SELF) < 2)
        return Py_NewRef(self);
    return ltpy_wrap(lt_transpose(SELF, 0, 1));
}

static PyObject *m_narrow(PyObject *self, PyObject *args)
{
    int dim;
    long long start, length;
    return PyArg_ParseTuple(args, "iLL:narrow", &dim, &start, &length) ? ltpy_wrap(lt_narrow(SELF, dim, start, length))
                                                                         : NULL;
}

static PyObject *m_select(PyObject *self, PyObject *args)
{
    int dim;
    long long index;
    return PyArg_ParseTuple(args, "iL:select", &dim, &index) ? ltpy_wrap(lt_select(SELF, dim, index)) : NULL;
}

static PyObject *m_flatten(PyObject *self, PyObject *args, PyObject *kw)
{
    int start = 0, end = -1;
    static char *kwlist[] = {"start_dim", "end_dim", NULL};
    return PyArg_ParseTupleAndKeywords(args, kw, "|ii:flatten", kwlist, &start, &end)
               ? ltpy_wrap(lt_flatten(SELF, start, end))
               : NULL;
}

static PyObject *m_diagonal(PyObject *self, PyObject *args, PyObject *kw)
{
    long long offset = 0;
    int d1 = 0, d2 = 1;
    static char *kwlist[] = {"offset", "dim1", "dim2", NULL};
    return PyArg_ParseTupleAndKeywords(args, kw, "|Lii:diagonal", kwlist, &offset, &d1, &d2)
               ? ltpy_wrap(lt_diagonal(SELF, offset, d1, d2))
               : NULL;
}

/* split(size, dim) / chunk(n, dim): a tuple of views */
static PyObject *pieces_tuple(lt_tensor **out, int n)
{
    PyObject *tup = PyTuple_New(n);
    for (int i = 0; i < n; i++) {
        PyObject *o = tup ? ltpy_wrap(out[i]) : (lt_release(out[i]), NULL);
        if (!o) {
            for (int j = i + 1; j < n; j++)
                lt_release(out[j]);
            Py_CLEAR(tup);
            break;
        }
        PyTuple_SET_ITEM(tup, i, o);
    }
    return tup;
}

typedef int (*pieces_fn)(lt_tensor *, long long, int, lt_tensor **, int);
static int split_fn(lt_tensor *t, long long s, int d, lt_tensor **o, int m) { return lt_split(t, s, d, o, m); }
static int chunk_fn(lt_tensor *t, long long s, int d, lt_tensor **o, int m) { return lt_chunk(t, (int)s, d, o, m); }
static PyObject *pieces(PyObject *self, PyObject *args, pieces_fn f)
{
    long long size;
    int dim = 0;
    if (!PyArg_ParseTuple(args, "L|i", &size, &dim))
        return NULL;
    int64_t len = lt_tensor_size(SELF, dim); /* at most this many pieces (one if empty) */
    if (len < 0)
        return ltpy_raise();
    int n = len < INT32_MAX ? (int)len + 1 : INT32_MAX;
    lt_tensor **out = PyMem_Calloc((size_t)n, sizeof *out);
    if (!out)
        return PyErr_NoMemory();
    int got = f(SELF, size, dim, out, n);
    PyObject *r = got < 0 ? ltpy_raise() : pieces_tuple(out, got);
    PyMem_Free(out);
    return r;
}
static PyObject *m_split(PyObject *self, PyObject *a) { return pieces(self, a, split_fn); }
static PyObject *m_chunk(PyObject *self, PyObject *a) { return pieces(self, a, chunk_fn); }

PyMethodDef ltpy_tensor_methods[] = {
#define U(name) {#name, m_##name, METH_NOARGS, NULL},
    U(neg) U(abs) U(exp) U(log) U(log1p) U(expm1) U(sqrt) U(rsqrt) U(sin) U(cos) U(tanh) U(sigmoid)
    U(relu) U(gelu) U(silu) U(erf) U(sign) U(floor) U(ceil) U(round) U(reciprocal) U(logical_not)
    U(clone) U(contiguous) U(detach) U(nonzero) U(squeeze_all) U(neg_) U(relu_) U(zero_) U(t)
#undef U
#define O(name) {#name, m_##name, METH_O, NULL},
    O(fill_) O(copy_) O(maximum) O(minimum) O(logical_and) O(logical_or) O(matmul)
    O(cumsum) O(softmax) O(log_softmax) O(unsqueeze) O(squeeze_dim)
#undef O
#define V(name) {#name, m_##name, METH_VARARGS, NULL},
    V(add_scaled) V(sub_scaled) V(add_scaled_) V(sub_scaled_) V(view) V(reshape) V(expand) V(permute)
    V(transpose) V(narrow) V(select) V(split) V(chunk)
#undef V
#define K(name) {#name, (PyCFunction)(void (*)(void))m_##name, METH_VARARGS | METH_KEYWORDS, NULL},
    K(clamp) K(clamp_) K(sum) K(mean) K(prod) K(amax) K(amin) K(all) K(any) K(logsumexp) K(var) K(std)
    K(max) K(min) K(argmax) K(argmin) K(sort) K(topk) K(flatten) K(diagonal)
#undef K
    {NULL, NULL, 0, NULL},
};
