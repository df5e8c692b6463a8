/* index.c - t[index] and t[index] = value, PyTorch's rules, over the C
 * API's views (select, slice, unsqueeze), lt_index, lt_index_put_ and where.
 *
 * Basic items (ints, slices with positive steps, None, ...) make a view of
 * t, so assignment through them writes t. Advanced items (integer tensors
 * or lists, bool masks as lt_nonzero's columns) are lt_index's per-dim
 * indices of that view: reading is lt_index, writing lt_index_put_. */
#include "ltpy.h"

typedef struct {
    lt_tensor *view;               /* t after the basic items (caller-owned) */
    int nadv;                      /* advanced items */
    lt_tensor *adv[LT_MAX_DIMS];   /* their integer indices (caller-owned) */
    int adv_dim[LT_MAX_DIMS];      /* the dim of view each one indexes */
} indexing;

static void indexing_free(indexing *ix)
{
    lt_release(ix->view);
    for (int i = 0; i < ix->nadv; i++)
        lt_release(ix->adv[i]);
    ix->view = NULL;
    ix->nadv = 0;
}

/* Replaces ix->view by next (consumed); false with the C error raised. */
static bool step(indexing *ix, lt_tensor *next)
{
    if (!next)
        return ltpy_raise(), false;
    lt_release(ix->view);
    ix->view = next;
    return true;
}

/* An index item as a tensor (lists become i64 or bool tensors), on dev. */
static lt_tensor *index_tensor(PyObject *item, lt_device dev)
{
    lt_tensor *t;
    if (ltpy_is_tensor(item)) {
        t = lt_retain(LTPY_TENSOR(item));
    } else {
        PyObject *args = Py_BuildValue("(OOO)", item, Py_None, Py_None);
        PyObject *o = args ? ltpy_tensor_from_data(NULL, args) : NULL;
        Py_XDECREF(args);
        if (!o)
            return NULL;
        t = lt_retain(LTPY_TENSOR(o));
        Py_DECREF(o);
    }
    if (!lt_device_equal(lt_tensor_device(t), dev)) {
        lt_tensor *moved = lt_to(t, dev);
        lt_release(t);
        t = moved;
        if (!t)
            ltpy_raise();
    }
    return t;
}

static bool is_advanced(PyObject *item)
{
    return ltpy_is_tensor(item) || PyList_Check(item);
}

/* Dims of the indexed tensor an item consumes (-1 for an error). */
static int consumed(PyObject *item)
{
    if (item == Py_None || item == Py_Ellipsis)
        return 0;
    if (ltpy_is_tensor(item) && lt_tensor_dtype(LTPY_TENSOR(item)) == LT_BOOL)
        return lt_tensor_ndim(LTPY_TENSOR(item));
    return 1;
}

/* A bool mask of k dims at dim d: one integer index per dim (nonzero). */
static bool add_mask(indexing *ix, lt_tensor *mask, int *d)
{
    int k = lt_tensor_ndim(mask);
    for (int j = 0; j < k; j++) {
        int64_t want = lt_tensor_size(ix->view, *d + j), got = lt_tensor_shape(mask)[j];
        if (want != got) {
            PyErr_Format(PyExc_IndexError, "the shape of the mask (dim %d: %lld) does not match the shape of the "
                         "indexed tensor (dim %d: %lld)", j, (long long)got, *d + j, (long long)want);
            return false;
        }
    }
    lt_tensor *nz = lt_nonzero(mask);
    if (!nz)
        return ltpy_raise(), false;
    for (int j = 0; j < k; j++) {
        lt_tensor *col = lt_select(nz, 1, j);
        if (!col) {
            lt_release(nz);
            return ltpy_raise(), false;
        }
        ix->adv[ix->nadv] = col;
        ix->adv_dim[ix->nadv++] = *d + j;
    }
    lt_release(nz);
    *d += k;
    return true;
}

static bool add_advanced(indexing *ix, PyObject *item, int *d)
{
    lt_tensor *t = index_tensor(item, lt_tensor_device(ix->view));
    if (!t)
        return false;
    lt_dtype dt = lt_tensor_dtype(t);
    if (dt == LT_BOOL) {
        bool ok = add_mask(ix, t, d);
        lt_release(t);
        return ok;
    }
    if (lt_dtype_is_floating(dt)) {
        lt_release(t);
        PyErr_SetString(PyExc_IndexError, "tensors used as indices must be integer or bool tensors");
        return false;
    }
    if (ix->nadv >= LT_MAX_DIMS) {
        lt_release(t);
        PyErr_SetString(PyExc_IndexError, "too many indices");
        return false;
    }
    ix->adv[ix->nadv] = t;
    ix->adv_dim[ix->nadv++] = (*d)++;
    return true;
}

static bool apply_slice(indexing *ix, PyObject *item, int *d)
{
    Py_ssize_t start, stop, stepv;
    if (PySlice_Unpack(item, &start, &stop, &stepv) < 0)
        return false;
    if (stepv <= 0) {
        PyErr_SetString(PyExc_ValueError, "step must be greater than zero");
        return false;
    }
    if (*d >= lt_tensor_ndim(ix->view)) {
        PyErr_SetString(PyExc_IndexError, "too many indices for tensor");
        return false;
    }
    Py_ssize_t size = (Py_ssize_t)lt_tensor_size(ix->view, *d);
    PySlice_AdjustIndices(size, &start, &stop, stepv);
    if (stop < start)
        stop = start;
    return step(ix, lt_slice(ix->view, (*d)++, start, stop, stepv));
}

static bool apply_item(indexing *ix, PyObject *item, int *d, int ellipsis_dims)
{
    if (item == Py_None)
        return step(ix, lt_unsqueeze(ix->view, (*d)++));
    if (item == Py_Ellipsis) {
        *d += ellipsis_dims;
        return true;
    }
    if (PySlice_Check(item))
        return apply_slice(ix, item, d);
    if (is_advanced(item))
        return add_advanced(ix, item, d);
    if (PyBool_Check(item) || !PyIndex_Check(item)) {
        PyErr_Format(PyExc_IndexError, "only integers, slices, None, ..., and integer or bool tensors are valid "
                                       "indices, got %.100s", Py_TYPE(item)->tp_name);
        return false;
    }
    Py_ssize_t i = PyNumber_AsSsize_t(item, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred())
        return false;
    if (*d >= lt_tensor_ndim(ix->view)) {
        PyErr_SetString(PyExc_IndexError, "too many indices for tensor");
        return false;
    }
    return step(ix, lt_select(ix->view, *d, i));
}

/* Applies the items of index to t: the basic view and the advanced items. */
static bool parse_index(lt_tensor *t, PyObject *index, indexing *ix)
{
    ix->view = lt_retain(t);
    ix->nadv = 0;
    PyObject *items = PyTuple_Check(index) ? Py_NewRef(index) : PyTuple_Pack(1, index);
    if (!items)
        return false;
    Py_ssize_t n = PyTuple_GET_SIZE(items);
    int used = 0, ellipses = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i);
        used += consumed(item);
        ellipses += item == Py_Ellipsis;
    }
    int ndim = lt_tensor_ndim(t);
    bool ok = ellipses <= 1 && used <= ndim;
    if (!ok)
        PyErr_SetString(PyExc_IndexError, ellipses > 1 ? "an index can only have a single ellipsis ('...')"
                                                       : "too many indices for tensor");
    int d = 0;
    for (Py_ssize_t i = 0; ok && i < n; i++)
        ok = apply_item(ix, PyTuple_GET_ITEM(items, i), &d, ndim - used);
    Py_DECREF(items);
    if (!ok)
        indexing_free(ix);
    return ok;
}

/* ---- advanced indexing: lt_index, lt_index_put_ ---------------------------- */

/* The advanced items as lt_index's per-dim indices of ix->view (NULL where
 * a dim is taken whole); returns how many entries. */
static int per_dim_indices(const indexing *ix, lt_tensor **indices)
{
    int n = 0;
    for (int j = 0; j < ix->nadv; j++) {
        for (; n < ix->adv_dim[j]; n++)
            indices[n] = NULL;
        indices[n++] = ix->adv[j];
    }
    return n;
}

static PyObject *gather(indexing *ix)
{
    lt_tensor *indices[LT_MAX_DIMS];
    int n = per_dim_indices(ix, indices);
    return ltpy_wrap(lt_index(ix->view, indices, n));
}

static PyObject *tensor_getitem(PyObject *self, PyObject *index)
{
    indexing ix;
    if (!parse_index(LTPY_TENSOR(self), index, &ix))
        return NULL;
    PyObject *r = ix.nadv ? gather(&ix) : ltpy_wrap(lt_retain(ix.view));
    indexing_free(&ix);
    return r;
}

/* ---- assignment ------------------------------------------------------------ */

static bool scatter_into(indexing *ix, PyObject *value)
{
    lt_tensor *indices[LT_MAX_DIMS];
    int n = per_dim_indices(ix, indices);
    lt_tensor *v = ltpy_operand(value, ix->view);
    bool ok = v && lt_index_put_(ix->view, indices, n, v);
    if (!ok && !PyErr_Occurred())
        ltpy_raise();
    lt_release(v);
    return ok;
}

/* t[mask] = value for a bool mask over all of t's dims: where(), no sync. */
static int assign_mask(lt_tensor *t, lt_tensor *mask, PyObject *value)
{
    lt_tensor *v = ltpy_operand(value, t);
    if (!v)
        return -1;
    lt_tensor *m = lt_device_equal(lt_tensor_device(mask), lt_tensor_device(t)) ? lt_retain(mask)
                                                                                : lt_to(mask, lt_tensor_device(t));
    lt_tensor *w = m ? lt_where(m, v, t) : NULL;
    bool ok = w && lt_copy_(t, w);
    lt_release(v), lt_release(m), lt_release(w);
    return ok ? 0 : (ltpy_raise(), -1);
}

static bool whole_mask(lt_tensor *t, PyObject *index)
{
    if (PyTuple_Check(index) && PyTuple_GET_SIZE(index) == 1)
        index = PyTuple_GET_ITEM(index, 0);
    if (!ltpy_is_tensor(index))
        return false;
    lt_tensor *m = LTPY_TENSOR(index);
    return lt_tensor_dtype(m) == LT_BOOL && lt_tensor_ndim(m) == lt_tensor_ndim(t) &&
           lt_tensor_numel(m) == lt_tensor_numel(t);
}

static int tensor_setitem(PyObject *self, PyObject *index, PyObject *value)
{
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "tensor elements cannot be deleted");
        return -1;
    }
    lt_tensor *t = LTPY_TENSOR(self);
    if (whole_mask(t, index) && (ltpy_is_scalar(value) || lt_tensor_numel(LTPY_TENSOR(value)) == 1))
        return assign_mask(t, LTPY_TENSOR(PyTuple_Check(index) ? PyTuple_GET_ITEM(index, 0) : index), value);
    indexing ix;
    if (!parse_index(t, index, &ix))
        return -1;
    bool ok;
    if (ix.nadv) {
        ok = scatter_into(&ix, value);
    } else {
        lt_tensor *v = ltpy_operand(value, ix.view);
        ok = v && lt_copy_(ix.view, v);
        if (!ok && !PyErr_Occurred())
            ltpy_raise();
        lt_release(v);
    }
    indexing_free(&ix);
    return ok ? 0 : -1;
}

static Py_ssize_t tensor_length(PyObject *self)
{
    lt_tensor *t = LTPY_TENSOR(self);
    if (lt_tensor_ndim(t) == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)lt_tensor_size(t, 0);
}

PyMappingMethods ltpy_tensor_as_mapping = {
    .mp_length = tensor_length,
    .mp_subscript = tensor_getitem,
    .mp_ass_subscript = tensor_setitem,
};
