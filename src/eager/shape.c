/*
 * shape.c - eager kernels of the shape op group.
 *
 *  - view ops (view, permute, slice, select, expand, diagonal): new handles
 *    over the input's storage, with computed strides and offset;
 *  - indexing and shaping ops (cat, index_select, gather, scatter,
 *    scatter_add, masked_fill, one_hot, tril, triu, sort, topk, nonzero,
 *    embedding): they write into fresh contiguous outputs allocated by the
 *    dispatcher (nonzero allocates its own, its size depends on the data).
 *
 * Inputs may be arbitrary strided views. Index tensors are first turned
 * into contiguous i64 (no copy when they already are) and fully validated
 * before anything is written, so a bad index never leaves a partial result.
 */
#include "eager/eager.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------ */

/* Normalizes a dim already validated by the shape rule. */
static int norm_dim(int64_t dim, int ndim)
{
    int range = ndim > 0 ? ndim : 1;
    return (int)(dim < 0 ? dim + range : dim);
}

/* Shape and strides (elements) of a tensor, with a 0-d tensor seen as a
 * one-element 1-d tensor so that loops need no special case. */
typedef struct geom {
    int nd;
    int64_t shape[LT_MAX_DIMS];
    int64_t strides[LT_MAX_DIMS];
} geom;

static geom geom_of(const lt_tensor *t)
{
    geom g;
    memset(&g, 0, sizeof g);
    g.nd = t->ndim > 0 ? t->ndim : 1;
    g.shape[0] = 1;
    for (int d = 0; d < t->ndim; d++) {
        g.shape[d] = t->shape[d];
        g.strides[d] = t->strides[d];
    }
    return g;
}

/* Coordinates of row-major position pos over shape[0..nd). */
static void unravel(int64_t pos, const int64_t *shape, int nd, int64_t *coord)
{
    for (int d = nd - 1; d >= 0; d--) {
        coord[d] = pos % shape[d];
        pos /= shape[d];
    }
}

/* Runs loops in parallel only when there is enough work. */
/* Rows per parallel chunk for rows of `width` elements. */
static int64_t rows_grain(int64_t width)
{
    return width > 0 && width < LT_PARALLEL_GRAIN ? LT_PARALLEL_GRAIN / width : 1;
}

/*
 * A contiguous i64 version of an index tensor whose values are all checked
 * to lie in [0, limit). On failure sets LT_ERR_INDEX (naming op, the value
 * and `what`, which describes the indexed range) and returns NULL. The
 * caller owns the result.
 */
static lt_tensor *checked_index(lt_tensor *index, int64_t limit, const char *op, const char *what)
{
    lt_tensor *c = lt_eager_as_contiguous(index, LT_I64, op);
    if (!c)
        return NULL;
    const int64_t *v = (const int64_t *)lt_tensor_ptr(c);
    int64_t n = lt_shape_numel(c->shape, c->ndim);
    bool bad = false;
    for (int64_t i = 0; i < n; i++)
        bad |= (uint64_t)v[i] >= (uint64_t)limit; /* negatives wrap to huge values */
    if (!bad)
        return c;
    int64_t first = 0;
    while ((uint64_t)v[first] < (uint64_t)limit)
        first++;
    if (limit > 0)
        lt_error(LT_ERR_INDEX, "%s: index %lld is out of range for %s (expected 0..%lld)", op, (long long)v[first],
                 what, (long long)limit - 1);
    else
        lt_error(LT_ERR_INDEX, "%s: index %lld is out of range for %s (it is empty: no index is valid)", op,
                 (long long)v[first], what);
    lt_tensor_unref(c);
    return NULL;
}

/* ======================================================================= */
/* Views                                                                    */
/* ======================================================================= */

/*
 * Strides that let a tensor of old_shape/old_strides be seen with
 * new_shape without copying (same number of elements), or false if none
 * exist. The old dims are cut, from the innermost, into chunks inside which
 * the memory is evenly strided; each chunk must be covered by a run of new
 * dims with exactly the same element count, and those new dims get strides
 * inside the chunk. Size-1 dims can go anywhere. This is PyTorch's rule, so
 * view succeeds and fails where torch's does.
 */
bool lt_view_strides(const int64_t *old_shape, const int64_t *old_strides, int old_nd,
                     const int64_t *new_shape, int new_nd, int64_t *new_strides)
{
    if (old_nd == 0) { /* one element: every new dim has size 1 */
        for (int d = 0; d < new_nd; d++)
            new_strides[d] = 1;
        return true;
    }
    if (lt_shape_numel(old_shape, old_nd) == 0) { /* no memory is touched */
        if (lt_shape_equal(old_shape, old_nd, new_shape, new_nd))
            memcpy(new_strides, old_strides, sizeof(int64_t) * (size_t)new_nd);
        else
            lt_contiguous_strides(new_shape, new_nd, new_strides);
        return true;
    }
    int nd = new_nd - 1;
    int64_t chunk_stride = old_strides[old_nd - 1];
    int64_t chunk_numel = 1, view_numel = 1;
    for (int od = old_nd - 1; od >= 0; od--) {
        chunk_numel *= old_shape[od];
        bool chunk_ends = od == 0 || (old_shape[od - 1] != 1 && old_strides[od - 1] != chunk_numel * chunk_stride);
        if (!chunk_ends)
            continue;
        while (nd >= 0 && (view_numel < chunk_numel || new_shape[nd] == 1)) {
            new_strides[nd] = view_numel * chunk_stride;
            view_numel *= new_shape[nd];
            nd--;
        }
        if (view_numel != chunk_numel)
            return false;
        if (od > 0) {
            chunk_stride = old_strides[od - 1];
            chunk_numel = 1;
            view_numel = 1;
        }
    }
    return nd == -1;
}

/* VIEW: strides from the stride rule, or a clear error. */
static lt_status view_geometry_view(const lt_tensor *t, const lt_meta *om, int64_t *strides)
{
    if (lt_view_strides(t->shape, t->strides, t->ndim, om->shape, om->ndim, strides))
        return LT_OK;
    char s1[160], s2[160], s3[160];
    return lt_error(LT_ERR_SHAPE,
                    "view: shape %s is not compatible with the input's strides %s (input shape %s): "
                    "a dim would span memory that is not evenly strided; use lt_reshape",
                    lt_shape_str(om->shape, om->ndim, s1, sizeof s1), lt_shape_str(t->strides, t->ndim, s2, sizeof s2),
                    lt_shape_str(t->shape, t->ndim, s3, sizeof s3));
}

static void view_geometry_permute(const lt_tensor *t, const lt_attrs *a, int64_t *strides)
{
    for (int i = 0; i < t->ndim; i++)
        strides[i] = t->strides[norm_dim(a->i[i], t->ndim)];
}

static void view_geometry_slice(const lt_tensor *t, const lt_attrs *a, const lt_meta *om, int64_t *strides,
                                int64_t *offset)
{
    int d = norm_dim(a->i[0], t->ndim);
    memcpy(strides, t->strides, sizeof(int64_t) * (size_t)t->ndim);
    /* the stride of a dim of length <= 1 is never used (and step may be huge) */
    if (om->shape[d] > 1)
        strides[d] *= a->i[3];
    *offset += a->i[1] * t->strides[d];
}

static void view_geometry_select(const lt_tensor *t, const lt_attrs *a, int64_t *strides, int64_t *offset)
{
    int d = norm_dim(a->i[0], t->ndim), nd = 0;
    for (int k = 0; k < t->ndim; k++)
        if (k != d)
            strides[nd++] = t->strides[k];
    *offset += a->i[1] * t->strides[d];
}

static void view_geometry_expand(const lt_tensor *t, const lt_meta *om, int64_t *strides)
{
    int lead = om->ndim - t->ndim;
    for (int d = 0; d < om->ndim; d++) {
        int td = d - lead;
        bool expanded = td < 0 || t->shape[td] != om->shape[d];
        strides[d] = expanded ? 0 : t->strides[td];
    }
}

static void view_geometry_diagonal(const lt_tensor *t, const lt_attrs *a, const lt_meta *om, int64_t *strides,
                                   int64_t *offset)
{
    int d1 = norm_dim(a->i[1], t->ndim), d2 = norm_dim(a->i[2], t->ndim), nd = 0;
    int64_t diag = a->i[0], len = om->shape[om->ndim - 1];
    for (int k = 0; k < t->ndim; k++)
        if (k != d1 && k != d2)
            strides[nd++] = t->strides[k];
    strides[nd] = t->strides[d1] + t->strides[d2];
    if (len > 0) /* then |diag| is below the plane's size: no overflow */
        *offset += diag >= 0 ? diag * t->strides[d2] : -diag * t->strides[d1];
}

/*
 * Strides and storage offset (elements) of the result of view op `op` on t,
 * whose shape om the op's shape rule has computed. Metadata only (t needs
 * no storage), so a device that records views can give its handles the
 * same geometry as eager ones. Fails only for VIEW, when t's strides cannot
 * express the new shape.
 */
lt_status lt_view_geometry(lt_op op, const lt_tensor *t, const lt_attrs *a, const lt_meta *om, int64_t *strides,
                           int64_t *offset)
{
    *offset = t->offset;
    switch (op) {
    case LT_OP_VIEW: return view_geometry_view(t, om, strides);
    case LT_OP_PERMUTE: view_geometry_permute(t, a, strides); break;
    case LT_OP_SLICE: view_geometry_slice(t, a, om, strides, offset); break;
    case LT_OP_SELECT: view_geometry_select(t, a, strides, offset); break;
    case LT_OP_EXPAND: view_geometry_expand(t, om, strides); break;
    case LT_OP_DIAGONAL: view_geometry_diagonal(t, a, om, strides, offset); break;
    default: return lt_error(LT_ERR_ARGUMENT, "view_geometry: %s is not a view op", lt_op_name(op));
    }
    return LT_OK;
}

/* Every view kernel: a new handle over the input's storage. */
static lt_status k_view_op(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                           lt_tensor **out)
{
    (void)nin;
    int64_t strides[LT_MAX_DIMS], offset;
    lt_status st = lt_view_geometry(op, in[0], a, &om[0], strides, &offset);
    if (st != LT_OK)
        return st;
    out[0] = lt_tensor_view_of(in[0], om[0].shape, strides, om[0].ndim, offset);
    return out[0] ? LT_OK : lt_last_status();
}

/* ======================================================================= */
/* cat                                                                      */
/* ======================================================================= */

/* Copies each input into its slab of the output (a view along dim);
 * lt_eager_copy converts dtypes and turns contiguous runs into memcpy. */
static lt_status k_cat(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                       lt_tensor **out)
{
    (void)op, (void)om;
    lt_tensor *o = out[0];
    int dim = norm_dim(a->i[0], o->ndim);
    int64_t pos = 0;
    for (int i = 0; i < nin; i++) {
        int64_t len = in[i]->shape[dim];
        if (lt_shape_numel(in[i]->shape, in[i]->ndim) > 0) {
            int64_t shape[LT_MAX_DIMS];
            memcpy(shape, o->shape, sizeof(int64_t) * (size_t)o->ndim);
            shape[dim] = len;
            lt_tensor *slab = lt_tensor_view_of(o, shape, o->strides, o->ndim, o->offset + pos * o->strides[dim]);
            if (!slab)
                return lt_last_status();
            lt_eager_copy(slab, in[i]);
            lt_tensor_unref(slab);
        }
        pos += len;
    }
    return LT_OK;
}

/* ======================================================================= */
/* index_select, embedding, gather                                          */
/* ======================================================================= */

/* Element copy by width: the indexing ops never convert dtypes. */
#define TAKE_INNER(T)                                                                    \
    do {                                                                                 \
        T *o = (T *)orow;                                                                \
        const T *s = (const T *)src;                                                     \
        for (int64_t j = 0; j < inner; j++)                                              \
            o[j] = s[base + irow[j * istep] * dstride + j * jstep];                      \
    } while (0)

/*
 * out[p] = self[p with p[dim] replaced by an index], for every position p
 * of the contiguous output (geometry og; self has geometry sg). The index
 * is idx[p] (per_element: gather) or idx[p[dim]] (index_select).
 */
typedef struct take_job {
    char *out;
    const geom *og, *sg;
    const char *src;
    const int64_t *idx;
    int dim, last;
    size_t es;
    int64_t inner, jstep, dstride, istep;
    bool per_element;
} take_job;

static void take_rows(void *ctx, int64_t r0, int64_t r1, int64_t chunk)
{
    (void)chunk;
    const take_job *t = ctx;
    const char *src = t->src;
    const int64_t *idx = t->idx;
    int64_t inner = t->inner, jstep = t->jstep, dstride = t->dstride, istep = t->istep;
    for (int64_t r = r0; r < r1; r++) {
        int64_t coord[LT_MAX_DIMS];
        unravel(r, t->og->shape, t->last, coord);
        int64_t base = 0;
        for (int d = 0; d < t->last; d++)
            if (d != t->dim)
                base += coord[d] * t->sg->strides[d];
        const int64_t *irow = t->per_element ? idx + r * inner : t->dim == t->last ? idx : idx + coord[t->dim];
        char *orow = t->out + r * inner * (int64_t)t->es;
        switch (t->es) {
        case 1: TAKE_INNER(uint8_t); break;
        case 2: TAKE_INNER(uint16_t); break;
        case 4: TAKE_INNER(uint32_t); break;
        default: TAKE_INNER(uint64_t); break;
        }
    }
}

static void take(char *out, const geom *og, const char *src, const geom *sg, int dim, const int64_t *idx,
                 bool per_element, size_t es)
{
    int last = og->nd - 1;
    int64_t inner = og->shape[last];
    int64_t numel = lt_shape_numel(og->shape, og->nd);
    if (numel == 0)
        return;
    take_job t = {.out = out, .og = og, .sg = sg, .src = src, .idx = idx, .dim = dim, .last = last, .es = es,
                  .inner = inner, .jstep = dim == last ? 0 : sg->strides[last], .dstride = sg->strides[dim],
                  .istep = (per_element || dim == last) ? 1 : 0, .per_element = per_element};
    lt_parallel_for(numel / inner, rows_grain(inner), 1, take_rows, &t);
}

/*
 * Writes self's slices idx[0..n) along dim, in order, to the contiguous
 * buffer out (self's shape with dim replaced by n). Contiguous self with
 * long enough slices copies whole blocks with memcpy.
 */
typedef struct slices_job {
    char *out;
    const char *src;
    const int64_t *idx;
    int64_t n, size;
    size_t block;
} slices_job;

static void copy_slices(void *ctx, int64_t o0, int64_t o1, int64_t chunk)
{
    (void)chunk;
    const slices_job *j = ctx;
    int64_t block = (int64_t)j->block;
    for (int64_t o = o0; o < o1; o++)
        for (int64_t k = 0; k < j->n; k++)
            memcpy(j->out + (o * j->n + k) * block, j->src + (o * j->size + j->idx[k]) * block, j->block);
}

static void select_slices(char *out, const lt_tensor *self, int dim, const int64_t *idx, int64_t n)
{
    geom sg = geom_of(self);
    size_t es = lt_dtype_size((lt_dtype)self->dtype);
    int64_t outer = lt_shape_numel(sg.shape, dim), size = sg.shape[dim];
    int64_t inner = lt_shape_numel(sg.shape + dim + 1, sg.nd - dim - 1);
    const char *src = lt_tensor_ptr(self);
    if (lt_tensor_contiguous(self) && inner * (int64_t)es >= 64) {
        slices_job j = {out, src, idx, n, size, (size_t)inner * es};
        lt_parallel_for(outer, rows_grain(n * inner), 1, copy_slices, &j);
        return;
    }
    geom og = sg;
    og.shape[dim] = n;
    take(out, &og, src, &sg, dim, idx, false, es);
}

static lt_status k_index_select(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                                lt_tensor **out)
{
    (void)op, (void)nin, (void)om;
    lt_tensor *self = in[0];
    int dim = norm_dim(a->i[0], self->ndim);
    geom sg = geom_of(self);
    char what[96];
    snprintf(what, sizeof what, "dim %d of size %lld", dim, (long long)sg.shape[dim]);
    lt_tensor *idx = checked_index(in[1], sg.shape[dim], "index_select", what);
    if (!idx)
        return lt_last_status();
    select_slices(lt_tensor_ptr(out[0]), self, dim, (const int64_t *)lt_tensor_ptr(idx),
                  lt_shape_numel(idx->shape, idx->ndim));
    lt_tensor_unref(idx);
    return LT_OK;
}

/* embedding(weight, indices) is index_select of weight's rows. */
static lt_status k_embedding(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                             lt_tensor **out)
{
    (void)op, (void)nin, (void)a, (void)om;
    lt_tensor *weight = in[0];
    char what[96];
    snprintf(what, sizeof what, "a weight of %lld rows", (long long)weight->shape[0]);
    lt_tensor *idx = checked_index(in[1], weight->shape[0], "embedding", what);
    if (!idx)
        return lt_last_status();
    select_slices(lt_tensor_ptr(out[0]), weight, 0, (const int64_t *)lt_tensor_ptr(idx),
                  lt_shape_numel(idx->shape, idx->ndim));
    lt_tensor_unref(idx);
    return LT_OK;
}

static lt_status k_gather(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                          lt_tensor **out)
{
    (void)op, (void)nin, (void)om;
    lt_tensor *self = in[0];
    int dim = norm_dim(a->i[0], self->ndim);
    geom sg = geom_of(self), og = geom_of(out[0]);
    char what[96];
    snprintf(what, sizeof what, "dim %d of size %lld", dim, (long long)sg.shape[dim]);
    lt_tensor *idx = checked_index(in[1], sg.shape[dim], "gather", what);
    if (!idx)
        return lt_last_status();
    take(lt_tensor_ptr(out[0]), &og, lt_tensor_ptr(self), &sg, dim, (const int64_t *)lt_tensor_ptr(idx), true,
         lt_dtype_size((lt_dtype)self->dtype));
    lt_tensor_unref(idx);
    return LT_OK;
}

/* ======================================================================= */
/* scatter, scatter_add                                                     */
/* ======================================================================= */

/* Integer adds wrap (through unsigned arithmetic) instead of overflowing. */
#define SCATTER_INNER(T, UPDATE)                                                         \
    do {                                                                                 \
        T *o = (T *)dst;                                                                 \
        const T *s = (const T *)src;                                                     \
        for (int64_t j = 0; j < inner; j++) {                                            \
            T *op_ = o + obase + irow[j] * dstride + j * jstep;                          \
            T sv = s[sbase + j * sstep];                                                 \
            UPDATE;                                                                      \
        }                                                                                \
    } while (0)

/* dst[p with p[dim] := idx[p]] (=|+=) src[p] for every position p of the
 * index (geometry ig, contiguous idx). Sequential: indices may repeat. */
static void scatter_rows(char *dst, const geom *dg, const char *src, const geom *sg, const geom *ig,
                         const int64_t *idx, int dim, bool add, lt_dtype dt)
{
    int last = ig->nd - 1;
    int64_t inner = ig->shape[last];
    int64_t numel = lt_shape_numel(ig->shape, ig->nd);
    if (numel == 0)
        return;
    int64_t rows = numel / inner;
    int64_t jstep = dim == last ? 0 : dg->strides[last], sstep = sg->strides[last];
    int64_t dstride = dg->strides[dim];
    size_t es = lt_dtype_size(dt);
    for (int64_t r = 0; r < rows; r++) {
        int64_t coord[LT_MAX_DIMS];
        unravel(r, ig->shape, last, coord);
        int64_t obase = 0, sbase = 0;
        for (int d = 0; d < last; d++) {
            sbase += coord[d] * sg->strides[d];
            if (d != dim)
                obase += coord[d] * dg->strides[d];
        }
        const int64_t *irow = idx + r * inner;
        if (!add) {
            switch (es) {
            case 1: SCATTER_INNER(uint8_t, *op_ = sv); break;
            case 2: SCATTER_INNER(uint16_t, *op_ = sv); break;
            case 4: SCATTER_INNER(uint32_t, *op_ = sv); break;
            default: SCATTER_INNER(uint64_t, *op_ = sv); break;
            }
            continue;
        }
        switch (dt) {
        case LT_F32: SCATTER_INNER(float, *op_ += sv); break;
        case LT_F64: SCATTER_INNER(double, *op_ += sv); break;
        case LT_I32: SCATTER_INNER(int32_t, *op_ = (int32_t)((uint32_t)*op_ + (uint32_t)sv)); break;
        case LT_I64: SCATTER_INNER(int64_t, *op_ = (int64_t)((uint64_t)*op_ + (uint64_t)sv)); break;
        case LT_U8: SCATTER_INNER(uint8_t, *op_ = (uint8_t)(*op_ + sv)); break;
        case LT_BOOL: SCATTER_INNER(uint8_t, *op_ = (uint8_t)(*op_ | sv)); break;
        case LT_BF16: SCATTER_INNER(uint16_t, *op_ = lt_f32_to_bf16(lt_bf16_to_f32(*op_) + lt_bf16_to_f32(sv))); break;
        default: SCATTER_INNER(uint16_t, *op_ = lt_f32_to_f16(lt_f16_to_f32(*op_) + lt_f16_to_f32(sv))); break;
        }
    }
}

static lt_status k_scatter(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                           lt_tensor **out)
{
    (void)nin, (void)om;
    const char *name = lt_op_name(op);
    lt_tensor *self = in[0], *src = in[2];
    int dim = norm_dim(a->i[0], self->ndim);
    geom dg = geom_of(out[0]), sg = geom_of(src), ig = geom_of(in[1]);
    char what[96];
    snprintf(what, sizeof what, "dim %d of size %lld", dim, (long long)dg.shape[dim]);
    lt_tensor *idx = checked_index(in[1], dg.shape[dim], name, what);
    if (!idx)
        return lt_last_status();
    lt_eager_copy(out[0], self);
    scatter_rows(lt_tensor_ptr(out[0]), &dg, lt_tensor_ptr(src), &sg, &ig, (const int64_t *)lt_tensor_ptr(idx), dim,
                 op == LT_OP_SCATTER_ADD, (lt_dtype)self->dtype);
    lt_tensor_unref(idx);
    return LT_OK;
}

/* ======================================================================= */
/* masked_fill, one_hot, tril, triu                                         */
/* ======================================================================= */

/* Operand 0: the output (already a copy of self); operand 1: the mask,
 * broadcast. ctx: the fill value, already in the output's dtype. */
#define DEF_MASKED(T)                                                                    \
    static void masked_##T(int64_t n, char **p, const int64_t *st, const void *ctx)      \
    {                                                                                    \
        T v;                                                                             \
        memcpy(&v, ctx, sizeof v);                                                       \
        if (st[0] == (int64_t)sizeof(T) && st[1] == 1) {                                 \
            T *o = (T *)p[0];                                                            \
            const uint8_t *m = (const uint8_t *)p[1];                                    \
            for (int64_t k = 0; k < n; k++)                                              \
                o[k] = m[k] ? v : o[k];                                                  \
        } else {                                                                         \
            for (int64_t k = 0; k < n; k++)                                              \
                if (*(const uint8_t *)(p[1] + k * st[1]))                                \
                    *(T *)(p[0] + k * st[0]) = v;                                        \
        }                                                                                \
    }
DEF_MASKED(uint8_t)
DEF_MASKED(uint16_t)
DEF_MASKED(uint32_t)
DEF_MASKED(uint64_t)

/* Converts value to dtype dt into buf (the shape rule checked the range). */
static void store_value(void *buf, double value, lt_dtype dt)
{
    switch (dt) {
    case LT_F32: LT_STORE_f32(buf, value); break;
    case LT_F64: LT_STORE_f64(buf, value); break;
    case LT_I32: LT_STORE_i32(buf, value); break;
    case LT_I64: LT_STORE_i64(buf, value); break;
    case LT_U8: LT_STORE_u8(buf, value); break;
    case LT_BOOL: *(uint8_t *)buf = value != 0; break;
    case LT_BF16: LT_STORE_bf16(buf, value); break;
    default: LT_STORE_f16(buf, value); break;
    }
}

static lt_status k_masked_fill(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                               lt_tensor **out)
{
    (void)op, (void)nin, (void)om;
    lt_eager_copy(out[0], in[0]);
    uint64_t value = 0;
    store_value(&value, a->f[0], (lt_dtype)out[0]->dtype);
    lt_iter it;
    lt_iter_build(&it, out[0], &in[1], 1);
    switch (lt_dtype_size((lt_dtype)out[0]->dtype)) {
    case 1: lt_iter_run(&it, masked_uint8_t, &value); break;
    case 2: lt_iter_run(&it, masked_uint16_t, &value); break;
    case 4: lt_iter_run(&it, masked_uint32_t, &value); break;
    default: lt_iter_run(&it, masked_uint64_t, &value); break;
    }
    return LT_OK;
}

static lt_status k_one_hot(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                           lt_tensor **out)
{
    (void)op, (void)nin, (void)om;
    int64_t classes = a->i[0];
    char what[96];
    snprintf(what, sizeof what, "num_classes %lld", (long long)classes);
    lt_tensor *idx = checked_index(in[0], classes, "one_hot", what);
    if (!idx)
        return lt_last_status();
    int64_t n = lt_shape_numel(idx->shape, idx->ndim);
    int64_t *o = (int64_t *)lt_tensor_ptr(out[0]);
    const int64_t *v = (const int64_t *)lt_tensor_ptr(idx);
    memset(o, 0, (size_t)(n * classes) * sizeof *o);
    for (int64_t i = 0; i < n; i++)
        o[i * classes + v[i]] = 1;
    lt_tensor_unref(idx);
    return LT_OK;
}

typedef struct triangle_job {
    char *base;
    int64_t rows, cols, k;
    size_t es;
    bool lower;
} triangle_job;

static void zero_outside(void *ctx, int64_t r0, int64_t r1, int64_t chunk)
{
    (void)chunk;
    const triangle_job *t = ctx;
    for (int64_t r = r0; r < r1; r++) {
        int64_t i = r % t->rows;
        /* tril keeps j <= i + k: zero [i + k + 1, cols); triu keeps j >= i + k: zero [0, i + k) */
        int64_t lo = t->lower ? i + t->k + 1 : 0, hi = t->lower ? t->cols : i + t->k;
        lo = lo < 0 ? 0 : lo > t->cols ? t->cols : lo;
        hi = hi < 0 ? 0 : hi > t->cols ? t->cols : hi;
        if (hi > lo)
            memset(t->base + (r * t->cols + lo) * (int64_t)t->es, 0, (size_t)(hi - lo) * t->es);
    }
}

/* Copies the input, then zeroes (all-zero bytes are 0 in every dtype) the
 * part of each row outside the triangle. */
static lt_status k_triangle(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                            lt_tensor **out)
{
    (void)nin, (void)om;
    lt_tensor *o = out[0];
    lt_eager_copy(o, in[0]);
    int64_t rows = o->shape[o->ndim - 2], cols = o->shape[o->ndim - 1];
    int64_t numel = lt_shape_numel(o->shape, o->ndim);
    if (numel == 0)
        return LT_OK;
    int64_t nrows = numel / cols; /* rows of every matrix of the batch */
    size_t es = lt_dtype_size((lt_dtype)o->dtype);
    /* clamping k keeps i + k within int64 and does not change the result */
    int64_t k = a->i[0];
    k = k < -rows - 1 ? -rows - 1 : k > cols + 1 ? cols + 1 : k;
    bool lower = op == LT_OP_TRIL;
    char *base = lt_tensor_ptr(o);
    triangle_job j = {base, rows, cols, k, es, lower};
    lt_parallel_for(nrows, rows_grain(cols), 1, zero_outside, &j);
    return LT_OK;
}

/* ======================================================================= */
/* sort, topk                                                               */
/* ======================================================================= */

/* Keys with their original positions; floating dtypes sort as double,
 * the others as int64 (both exact). */
typedef struct fkey {
    double key;
    int64_t pos;
} fkey;
typedef struct ikey {
    int64_t key;
    int64_t pos;
} ikey;

/* "x goes before y". NaN is greater than everything, like in torch. */
#define F_ASC(x, y) ((x) < (y) || (isnan(y) && !isnan(x)))
#define F_DESC(x, y) ((x) > (y) || (isnan(x) && !isnan(y)))
#define I_ASC(x, y) ((x) < (y))
#define I_DESC(x, y) ((x) > (y))

#define SORT_RUN 24

/* Stable merge sort: insertion-sorted runs, then bottom-up merges that take
 * from the right run only when its head strictly goes first. */
#define DEF_MERGE_SORT(NAME, T, BEFORE)                                                  \
    static void NAME(T *a, T *tmp, int64_t n)                                            \
    {                                                                                    \
        for (int64_t lo = 0; lo < n; lo += SORT_RUN) {                                   \
            int64_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;                          \
            for (int64_t i = lo + 1; i < hi; i++) {                                      \
                T x = a[i];                                                              \
                int64_t j = i;                                                           \
                for (; j > lo && BEFORE(x.key, a[j - 1].key); j--)                       \
                    a[j] = a[j - 1];                                                     \
                a[j] = x;                                                                \
            }                                                                            \
        }                                                                                \
        T *from = a, *to = tmp;                                                          \
        for (int64_t w = SORT_RUN; w < n; w *= 2) {                                      \
            for (int64_t lo = 0; lo < n; lo += 2 * w) {                                  \
                int64_t mid = lo + w < n ? lo + w : n;                                   \
                int64_t hi = lo + 2 * w < n ? lo + 2 * w : n;                            \
                int64_t l = lo, r = mid, o = lo;                                         \
                while (l < mid && r < hi)                                                \
                    to[o++] = BEFORE(from[r].key, from[l].key) ? from[r++] : from[l++];  \
                while (l < mid)                                                          \
                    to[o++] = from[l++];                                                 \
                while (r < hi)                                                           \
                    to[o++] = from[r++];                                                 \
            }                                                                            \
            T *swap = from;                                                              \
            from = to;                                                                   \
            to = swap;                                                                   \
        }                                                                                \
        if (from != a)                                                                   \
            memcpy(a, from, sizeof(T) * (size_t)n);                                      \
    }
DEF_MERGE_SORT(sort_f_asc, fkey, F_ASC)
DEF_MERGE_SORT(sort_f_desc, fkey, F_DESC)
DEF_MERGE_SORT(sort_i_asc, ikey, I_ASC)
DEF_MERGE_SORT(sort_i_desc, ikey, I_DESC)

/*
 * Partial selection for topk with a small k: leaves in a[0..k) the first k
 * keys of the stable sorted order of a[0..n), by insertion into a sorted
 * prefix. Keys are visited in position order and a key is inserted after
 * every key it does not strictly go before, so ties keep position order.
 */
#define DEF_SELECT_FIRST(NAME, T, BEFORE)                                                \
    static void NAME(T *a, int64_t n, int64_t k)                                         \
    {                                                                                    \
        int64_t m = 0; /* a[0..m) holds the best keys so far, sorted */                  \
        for (int64_t j = 0; j < n; j++) {                                                \
            T x = a[j];                                                                  \
            if (m == k && !BEFORE(x.key, a[k - 1].key))                                  \
                continue;                                                                \
            int64_t p = m < k ? m : k - 1;                                               \
            for (; p > 0 && BEFORE(x.key, a[p - 1].key); p--)                            \
                a[p] = a[p - 1];                                                         \
            a[p] = x;                                                                    \
            if (m < k)                                                                   \
                m++;                                                                     \
        }                                                                                \
    }
DEF_SELECT_FIRST(select_f_asc, fkey, F_ASC)
DEF_SELECT_FIRST(select_f_desc, fkey, F_DESC)
DEF_SELECT_FIRST(select_i_asc, ikey, I_ASC)
DEF_SELECT_FIRST(select_i_desc, ikey, I_DESC)

/* Up to this k, topk selects by insertion instead of sorting everything. */
#define TOPK_SELECT_MAX 32

/* Loads the n elements of a slice (byte stride) as keys. */
static void load_keys(void *keys, const char *p, int64_t stride, int64_t n, lt_dtype dt)
{
    if (lt_dtype_is_floating(dt)) {
        fkey *f = keys;
        for (int64_t j = 0; j < n; j++) {
            const char *e = p + j * stride;
            switch (dt) {
            case LT_F32: f[j].key = LT_LOAD_f32(e); break;
            case LT_F64: f[j].key = LT_LOAD_f64(e); break;
            case LT_BF16: f[j].key = LT_LOAD_bf16(e); break;
            default: f[j].key = LT_LOAD_f16(e); break;
            }
            f[j].pos = j;
        }
        return;
    }
    ikey *k = keys;
    for (int64_t j = 0; j < n; j++) {
        const char *e = p + j * stride;
        switch (dt) {
        case LT_I32: k[j].key = LT_LOAD_i32(e); break;
        case LT_I64: k[j].key = LT_LOAD_i64(e); break;
        default: k[j].key = *(const uint8_t *)e; break; /* u8, bool */
        }
        k[j].pos = j;
    }
}

/* Orders keys so that the first k are those of the stable sorted order. */
static void sort_keys(void *keys, void *tmp, int64_t n, int64_t k, bool floating, bool desc)
{
    if (k < n && k <= TOPK_SELECT_MAX) {
        if (floating)
            (desc ? select_f_desc : select_f_asc)(keys, n, k);
        else
            (desc ? select_i_desc : select_i_asc)(keys, n, k);
        return;
    }
    if (floating)
        (desc ? sort_f_desc : sort_f_asc)(keys, tmp, n);
    else
        (desc ? sort_i_desc : sort_i_asc)(keys, tmp, n);
}

/* Geometry of every dim except `dim`: the slices of a sort. */
static void drop_dim(const geom *g, int dim, int64_t *shape, int64_t *strides, int *nd)
{
    *nd = 0;
    for (int d = 0; d < g->nd; d++) {
        if (d == dim)
            continue;
        shape[*nd] = g->shape[d];
        strides[*nd] = g->strides[d];
        (*nd)++;
    }
}

typedef struct sort_job {
    const char *sbase;
    char *vbase;
    int64_t *ibase;
    int64_t n, kout, sstep, vstep, istep;
    int64_t oshape[LT_MAX_DIMS], sstr[LT_MAX_DIMS], vstr[LT_MAX_DIMS], istr[LT_MAX_DIMS];
    int ond;
    lt_dtype dt;
    size_t es, scratch; /* bytes of keys + merge scratch per slice */
    bool floating, desc;
    char *buffers;      /* one scratch per chunk */
} sort_job;

static void sort_chunk(void *ctx, int64_t s0, int64_t s1, int64_t chunk)
{
    const sort_job *j = ctx;
    void *keys = j->buffers + j->scratch * (size_t)chunk;
    size_t es = j->es;
    for (int64_t s = s0; s < s1; s++) {
        int64_t coord[LT_MAX_DIMS], soff = 0, voff = 0, ioff = 0;
        unravel(s, j->oshape, j->ond, coord);
        for (int d = 0; d < j->ond; d++) {
            soff += coord[d] * j->sstr[d];
            voff += coord[d] * j->vstr[d];
            ioff += coord[d] * j->istr[d];
        }
        const char *sp = j->sbase + soff * (int64_t)es;
        load_keys(keys, sp, j->sstep, j->n, j->dt);
        sort_keys(keys, (char *)keys + j->scratch / 2, j->n, j->kout, j->floating, j->desc);
        char *vp = j->vbase + voff * (int64_t)es;
        for (int64_t k = 0; k < j->kout; k++) {
            int64_t pos = j->floating ? ((const fkey *)keys)[k].pos : ((const ikey *)keys)[k].pos;
            memcpy(vp + k * j->vstep, sp + pos * j->sstep, es);
            j->ibase[ioff + k * j->istep] = pos;
        }
    }
}

/* Sorts every slice of self along dim; writes the first kout sorted
 * values and positions of each slice to values/indices. */
static lt_status sort_slices(lt_tensor *self, int dim, bool desc, lt_tensor *values, lt_tensor *indices)
{
    geom sg = geom_of(self), vg = geom_of(values), ig = geom_of(indices);
    int64_t n = sg.shape[dim], kout = vg.shape[dim];
    int64_t numel = lt_shape_numel(sg.shape, sg.nd);
    if (numel == 0 || kout == 0)
        return LT_OK;
    sort_job j = {.n = n, .kout = kout, .dt = (lt_dtype)self->dtype, .desc = desc};
    j.floating = lt_dtype_is_floating(j.dt);
    j.es = lt_dtype_size(j.dt);
    drop_dim(&sg, dim, j.oshape, j.sstr, &j.ond);
    drop_dim(&vg, dim, j.oshape, j.vstr, &j.ond);
    drop_dim(&ig, dim, j.oshape, j.istr, &j.ond);
    int64_t slices = numel / n, grain = rows_grain(n);
    j.scratch = 2 * (size_t)n * sizeof(fkey); /* keys and merge scratch */
    j.buffers = lt_alloc(j.scratch * (size_t)lt_parallel_chunks(slices, grain, 1), "sort");
    if (!j.buffers)
        return lt_last_status();
    j.sbase = lt_tensor_ptr(self);
    j.vbase = lt_tensor_ptr(values);
    j.ibase = (int64_t *)lt_tensor_ptr(indices);
    j.sstep = sg.strides[dim] * (int64_t)j.es;
    j.vstep = vg.strides[dim] * (int64_t)j.es;
    j.istep = ig.strides[dim];
    lt_parallel_for(slices, grain, 1, sort_chunk, &j);
    lt_free(j.buffers);
    return LT_OK;
}

static lt_status k_sort(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                        lt_tensor **out)
{
    (void)op, (void)nin, (void)om;
    return sort_slices(in[0], norm_dim(a->i[0], in[0]->ndim), a->flag & 1, out[0], out[1]);
}

static lt_status k_topk(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                        lt_tensor **out)
{
    (void)op, (void)nin, (void)om;
    return sort_slices(in[0], norm_dim(a->i[1], in[0]->ndim), a->flag & 1, out[0], out[1]);
}

/* ======================================================================= */
/* nonzero                                                                  */
/* ======================================================================= */

/* "element i is nonzero" per dtype; bf16/f16 ignore the sign bit (-0). */
#define NZ_f32(p, i) (((const float *)(p))[i] != 0)
#define NZ_f64(p, i) (((const double *)(p))[i] != 0)
#define NZ_i32(p, i) (((const int32_t *)(p))[i] != 0)
#define NZ_i64(p, i) (((const int64_t *)(p))[i] != 0)
#define NZ_u8(p, i) (((const uint8_t *)(p))[i] != 0)
#define NZ_b8(p, i) (((const uint8_t *)(p))[i] != 0)
#define NZ_bf16(p, i) ((((const uint16_t *)(p))[i] & 0x7fff) != 0)
#define NZ_f16(p, i) ((((const uint16_t *)(p))[i] & 0x7fff) != 0)

/* Counts the nonzeros of n contiguous elements, or (rows != NULL) writes
 * their coordinates over shape[0..nd) as rows of nd i64 values. */
#define DEF_NONZERO(unused, S, e)                                                        \
    static int64_t nonzero_##S(const void *p, int64_t n, const int64_t *shape, int nd,   \
                               int64_t *rows)                                            \
    {                                                                                    \
        int64_t count = 0;                                                               \
        if (!rows) {                                                                     \
            for (int64_t i = 0; i < n; i++)                                              \
                count += NZ_##S(p, i);                                                   \
            return count;                                                                \
        }                                                                                \
        int64_t coord[LT_MAX_DIMS] = {0};                                                \
        for (int64_t i = 0; i < n; i++) {                                                \
            if (NZ_##S(p, i)) {                                                          \
                memcpy(rows + count * nd, coord, sizeof(int64_t) * (size_t)nd);          \
                count++;                                                                 \
            }                                                                            \
            for (int d = nd - 1; d >= 0 && ++coord[d] == shape[d]; d--)                  \
                coord[d] = 0;                                                            \
        }                                                                                \
        return count;                                                                    \
    }
LT_FOR_DTYPES_A(DEF_NONZERO, _)

typedef int64_t (*nonzero_fn)(const void *p, int64_t n, const int64_t *shape, int nd, int64_t *rows);
#define NONZERO_ENTRY(unused, S, e) nonzero_##S,
static const nonzero_fn nonzero_fns[LT_NUM_DTYPES] = {LT_FOR_DTYPES_A(NONZERO_ENTRY, _)};

static lt_status k_nonzero(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                           lt_tensor **out)
{
    (void)op, (void)nin, (void)a, (void)om;
    lt_tensor *t = in[0];
    lt_tensor *c = lt_eager_as_contiguous(t, (lt_dtype)t->dtype, "nonzero");
    if (!c)
        return lt_last_status();
    nonzero_fn fn = nonzero_fns[t->dtype];
    const void *p = lt_tensor_ptr(c);
    int64_t n = lt_shape_numel(t->shape, t->ndim);
    int64_t count = fn(p, n, t->shape, t->ndim, NULL);
    int64_t shape[2] = {count, t->ndim};
    lt_meta m = lt_meta_make(LT_I64, shape, 2);
    out[0] = lt_tensor_alloc(&m, t->device, "nonzero");
    if (out[0] && count > 0 && t->ndim > 0)
        fn(p, n, t->shape, t->ndim, (int64_t *)lt_tensor_ptr(out[0]));
    lt_tensor_unref(c);
    return out[0] ? LT_OK : lt_last_status();
}

void lt_eager_register_shape(void)
{
    lt_eager_set_kernel(LT_OP_VIEW, k_view_op);
    lt_eager_set_kernel(LT_OP_PERMUTE, k_view_op);
    lt_eager_set_kernel(LT_OP_SLICE, k_view_op);
    lt_eager_set_kernel(LT_OP_SELECT, k_view_op);
    lt_eager_set_kernel(LT_OP_EXPAND, k_view_op);
    lt_eager_set_kernel(LT_OP_DIAGONAL, k_view_op);
    lt_eager_set_kernel(LT_OP_CAT, k_cat);
    lt_eager_set_kernel(LT_OP_INDEX_SELECT, k_index_select);
    lt_eager_set_kernel(LT_OP_GATHER, k_gather);
    lt_eager_set_kernel(LT_OP_SCATTER, k_scatter);
    lt_eager_set_kernel(LT_OP_SCATTER_ADD, k_scatter);
    lt_eager_set_kernel(LT_OP_MASKED_FILL, k_masked_fill);
    lt_eager_set_kernel(LT_OP_ONE_HOT, k_one_hot);
    lt_eager_set_kernel(LT_OP_TRIL, k_triangle);
    lt_eager_set_kernel(LT_OP_TRIU, k_triangle);
    lt_eager_set_kernel(LT_OP_SORT, k_sort);
    lt_eager_set_kernel(LT_OP_TOPK, k_topk);
    lt_eager_set_kernel(LT_OP_NONZERO, k_nonzero);
    lt_eager_set_kernel(LT_OP_EMBEDDING, k_embedding);
}
