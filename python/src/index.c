/* index.c - t[index] and t[index] = value, PyTorch's rules, over the C
 * API's views (select, slice, unsqueeze), index_select, scatter and where.
 *
 * Basic items (ints, slices with positive steps, None, ...) make a view of
 * t, so assignment through them writes t. Advanced items (integer tensors
 * or lists, bool masks) are combined into one flat index over the indexed
 * dims: reading gathers with index_select, writing scatters into a copy of
 * those dims and copies it back through the view. */
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

/* ---- advanced indexing: one flat index over the indexed dims ------------- */

typedef struct {
    lt_tensor *flat;   /* [N, rest...]: the indexed dims first, merged */
    lt_tensor *perm;   /* the view with the indexed dims first (a view of t) */
    lt_tensor *lin;    /* flat positions, [M] */
    int64_t bshape[LT_MAX_DIMS]; /* broadcast shape of the indices */
    int nb;
    int front;         /* where the index dims go in the result */
} gather_plan;

/* i + size where i < 0: Python's negative indices. */
static lt_tensor *wrap_negative(lt_tensor *i, int64_t size)
{
    lt_tensor *s = lt_scalar((double)size, lt_tensor_dtype(i), lt_tensor_device(i));
    lt_tensor *neg = lt_lt_scalar(i, 0), *shifted = lt_add(i, s);
    lt_tensor *r = lt_where(neg, shifted, i);
    lt_release(s), lt_release(neg), lt_release(shifted);
    return r;
}

/* False (IndexError) if some index lies outside [-size, size). */
static bool check_range(lt_tensor *i, int64_t size, int dim)
{
    lt_tensor *lo = lt_lt_scalar(i, (double)-size), *hi = lt_ge_scalar(i, (double)size);
    lt_tensor *bad = lt_logical_or(lo, hi), *any = lt_any(bad, NULL, 0, false);
    double v = 0;
    lt_status st = any ? lt_item(any, &v) : lt_last_status();
    lt_release(lo), lt_release(hi), lt_release(bad), lt_release(any);
    if (st != LT_OK)
        return ltpy_raise(), false;
    if (v != 0)
        PyErr_Format(PyExc_IndexError, "index out of range for dim %d of size %lld", dim, (long long)size);
    return v == 0;
}

static bool plan_linear_index(indexing *ix, gather_plan *g)
{
    const int64_t *shape = lt_tensor_shape(ix->view);
    lt_tensor *lin = NULL;
    for (int j = 0; j < ix->nadv; j++) {
        int64_t size = shape[ix->adv_dim[j]];
        if (ix->nadv > 1 && !check_range(ix->adv[j], size, ix->adv_dim[j]))
            return lt_release(lin), false;
        lt_tensor *w = wrap_negative(ix->adv[j], size), *next;
        if (!lin) {
            next = lt_retain(w);
        } else { /* lin * size + w */
            lt_tensor *s = lt_scalar((double)size, LT_I64, lt_tensor_device(w));
            lt_tensor *scaled = lt_mul(lin, s);
            next = lt_add(scaled, w);
            lt_release(s), lt_release(scaled);
        }
        lt_release(w), lt_release(lin);
        if (!(lin = next))
            return ltpy_raise(), false;
    }
    g->nb = lt_tensor_ndim(lin);
    for (int i = 0; i < g->nb; i++)
        g->bshape[i] = lt_tensor_shape(lin)[i];
    g->lin = lt_reshape(lin, (int64_t[]){-1}, 1);
    lt_release(lin);
    return g->lin ? true : (ltpy_raise(), false);
}

static bool plan_gather(indexing *ix, gather_plan *g)
{
    int nd = lt_tensor_ndim(ix->view), perm[LT_MAX_DIMS], np = 0;
    bool taken[LT_MAX_DIMS] = {false}, adjacent = true;
    for (int j = 0; j < ix->nadv; j++) {
        perm[np++] = ix->adv_dim[j];
        taken[ix->adv_dim[j]] = true;
        adjacent = adjacent && (j == 0 || ix->adv_dim[j] == ix->adv_dim[j - 1] + 1);
    }
    int64_t fshape[LT_MAX_DIMS] = {1};
    int nf = 1;
    for (int j = 0; j < ix->nadv; j++)
        fshape[0] *= lt_tensor_shape(ix->view)[ix->adv_dim[j]];
    for (int i = 0; i < nd; i++)
        if (!taken[i])
            fshape[nf++] = lt_tensor_shape(ix->view)[perm[np++] = i];
    g->front = adjacent ? ix->adv_dim[0] : 0;
    g->perm = lt_permute(ix->view, perm, nd);
    g->flat = g->perm ? lt_reshape(g->perm, fshape, nf) : NULL;
    if (!g->flat)
        return ltpy_raise(), false;
    return plan_linear_index(ix, g);
}

static void plan_free(gather_plan *g)
{
    lt_release(g->flat), lt_release(g->perm), lt_release(g->lin);
}

/* Result dims [B..., rest...] -> rest[:front] + B + rest[front:]. */
static void result_perm(const gather_plan *g, int nd, int *perm)
{
    int k = 0;
    for (int i = 0; i < g->front; i++)
        perm[k++] = g->nb + i;
    for (int i = 0; i < g->nb; i++)
        perm[k++] = i;
    for (int i = g->nb + g->front; i < nd; i++)
        perm[k++] = i;
}

static PyObject *gather(indexing *ix)
{
    gather_plan g = {0};
    if (!plan_gather(ix, &g))
        return plan_free(&g), NULL;
    lt_tensor *rows = lt_index_select(g.flat, 0, g.lin);
    int nr = lt_tensor_ndim(g.flat) - 1, nd = g.nb + nr, perm[LT_MAX_DIMS];
    int64_t shape[LT_MAX_DIMS];
    for (int i = 0; i < g.nb; i++)
        shape[i] = g.bshape[i];
    for (int i = 0; i < nr; i++)
        shape[g.nb + i] = lt_tensor_shape(g.flat)[1 + i];
    lt_tensor *shaped = nd <= LT_MAX_DIMS ? lt_reshape(rows, shape, nd) : NULL;
    result_perm(&g, nd, perm);
    lt_tensor *r = shaped ? lt_permute(shaped, perm, nd) : NULL;
    lt_release(rows), lt_release(shaped);
    plan_free(&g);
    return ltpy_wrap(r);
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

/* value as a tensor of dst's dtype, broadcast to shape (a copy). */
static lt_tensor *value_as(PyObject *value, lt_tensor *dst, const int64_t *shape, int nd)
{
    lt_tensor *v = ltpy_operand(value, dst);
    if (!v)
        return NULL;
    lt_tensor *out = lt_empty(shape, nd, lt_tensor_dtype(dst), lt_tensor_device(dst));
    lt_tensor *r = out ? lt_copy_(out, v) : NULL;
    lt_release(v);
    if (!r) {
        lt_release(out);
        ltpy_raise();
        return NULL;
    }
    return out;
}

static bool scatter_into(indexing *ix, PyObject *value)
{
    gather_plan g = {0};
    if (!plan_gather(ix, &g))
        return plan_free(&g), false;
    int nr = lt_tensor_ndim(g.flat) - 1, nd = g.nb + nr, perm[LT_MAX_DIMS], inv[LT_MAX_DIMS];
    int64_t rshape[LT_MAX_DIMS], mshape[LT_MAX_DIMS], ones[LT_MAX_DIMS];
    result_perm(&g, nd, perm);
    int64_t m = lt_tensor_numel(g.lin);
    mshape[0] = m, ones[0] = m;
    for (int i = 0; i < nd; i++)
        inv[perm[i]] = i;
    for (int i = 0; i < g.nb; i++)
        rshape[inv[i]] = g.bshape[i];
    for (int i = 0; i < nr; i++) {
        rshape[inv[g.nb + i]] = mshape[1 + i] = lt_tensor_shape(g.flat)[1 + i];
        ones[1 + i] = 1;
    }
    lt_tensor *src = value_as(value, g.flat, rshape, nd); /* the getitem result's shape */
    lt_tensor *back = src ? lt_permute(src, inv, nd) : NULL;
    lt_tensor *rows = back ? lt_reshape(back, mshape, nr + 1) : NULL;
    lt_tensor *iv = lt_view(g.lin, ones, nr + 1);
    lt_tensor *ie = iv ? lt_expand(iv, mshape, nr + 1) : NULL;
    lt_tensor *idx = ie ? lt_contiguous(ie) : NULL;
    lt_tensor *scattered = rows && idx ? lt_scatter(g.flat, 0, idx, rows) : NULL;
    lt_tensor *shaped = scattered ? lt_reshape(scattered, lt_tensor_shape(g.perm), lt_tensor_ndim(g.perm)) : NULL;
    bool ok = shaped && lt_copy_(g.perm, shaped);
    if (!ok && !PyErr_Occurred())
        ltpy_raise();
    lt_release(src), lt_release(back), lt_release(rows), lt_release(iv), lt_release(ie), lt_release(idx);
    lt_release(scattered), lt_release(shaped);
    plan_free(&g);
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
