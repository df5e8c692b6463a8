/*
 * tensor.c - lazy tensors: the live-tensor registry, recording ops,
 * in-place updates by substitution, views with inverse updates, eager
 * fallback, and transfers.
 *
 * A lazy tensor's value is either device data (t->storage, contiguous) or a
 * pending IR value (lazy->value). A view keeps its root base and the chain
 * of view steps from it; its value is re-derived from the base whenever the
 * base has changed since, and an in-place update of a view rewrites the
 * base through the inverse steps, so the IR stays purely functional.
 */
#include "backend/backend.h"
#include "lazy/lazy.h"

#include <stdlib.h>
#include <string.h>

static int64_t pending_tensors;
static pthread_once_t lazy_once = PTHREAD_ONCE_INIT;

static lt_lazy *L(const lt_tensor *t) { return (lt_lazy *)t->lazy; }

int64_t lt_lazy_pending_count(void) { return pending_tensors; }

/* ---- pending state -------------------------------------------------------- */

static void set_pending(lt_tensor *t, lt_value v)
{
    lt_lazy *z = L(t);
    if (!z->pending)
        pending_tensors++;
    z->pending = true;
    z->value = v;
    z->generation = lt_ir_generation();
}

void lt_lazy_set_pending(lt_tensor *t, lt_value v) { set_pending(t, v); }

void lt_lazy_clear_pending(lt_tensor *t)
{
    lt_lazy *z = L(t);
    if (z->pending) {
        z->pending = false;
        pending_tensors--;
    }
}

/* The arena is reset only where no value of it can be in use: when the
 * last pending tensor dies, and at the end of a barrier. */
void lt_lazy_reset_if_idle(void)
{
    if (pending_tensors == 0)
        lt_ir_reset();
}

/* ---- registry ---------------------------------------------------------------- */

/*
 * Lazy states of dead tensors are kept for reuse: a traced op makes one and
 * usually drops one, and malloc's calloc and free cost more than the rest of
 * the handle. Like the registry, the spares are touched only by the thread
 * that owns the lazy device.
 */
#define SPARE_STATES_MAX 1024
static lt_lazy *spare_states[SPARE_STATES_MAX];
static int spare_count;

static lt_lazy *lazy_state_new(void)
{
    if (spare_count == 0)
        return calloc(1, sizeof(lt_lazy));
    lt_lazy *z = spare_states[--spare_count];
    memset(z, 0, sizeof *z);
    return z;
}

static void lazy_state_free(lt_lazy *z)
{
    if (spare_count < SPARE_STATES_MAX)
        spare_states[spare_count++] = z;
    else
        free(z);
}

static void on_death(lt_tensor *t)
{
    lt_lazy *z = L(t);
    if (!z)
        return;
    lt_lazy_registry_unlink(t);
    lt_metric_bump(LT_HOT_TENSORS_DESTROYED);
    lt_tensor *base = z->base;
    lt_storage_unref(z->future);
    free(z->chain);
    bool was_pending = z->pending;
    lazy_state_free(z);
    t->lazy = NULL;
    if (was_pending && --pending_tensors == 0)
        lt_ir_reset();
    if (base)
        lt_tensor_drop(base);
}

static void init_once(void)
{
    lt_set_tensor_death_hook(LT_DEVICE_LAZY, on_death);
    /* dropping a lazy tensor changes the registry: only the owner may */
    lt_set_device_guard_hook(LT_DEVICE_LAZY, lt_lazy_enter);
    lt_lazy_device_available = true;
}

void lt_lazy_init(void) { pthread_once(&lazy_once, init_once); }

/* The lazy device is available as soon as the library is loaded. */
__attribute__((constructor)) static void lazy_register(void) { lt_lazy_init(); }

static lt_device lazy_device(void)
{
    lt_device d = {LT_DEVICE_LAZY, 0};
    return d;
}

/* A new lazy handle (no data, no value yet), registered as live. */
static lt_tensor *new_lazy(const lt_meta *m)
{
    lt_lazy_init();
    lt_lazy *z = lazy_state_new();
    if (!z) {
        lt_error(LT_ERR_MEMORY, "lazy: out of memory");
        return NULL;
    }
    lt_tensor *t = lt_tensor_new_handle(m, lazy_device());
    if (!t) {
        lazy_state_free(z);
        return NULL;
    }
    t->lazy = z;
    lt_lazy_registry_insert(t); /* the newest id: appended */
    lt_metric_bump(LT_HOT_TENSORS_CREATED);
    return t;
}

/* ---- values ----------------------------------------------------------------- */

static lt_status leaf_of(lt_tensor *t, lt_value *v)
{
    lt_lazy *z = L(t);
    uint64_t gen = lt_ir_generation();
    if (z->leaf_generation != gen) {
        lt_meta m = lt_tensor_meta(t);
        m.weak = 0;
        uint32_t node = lt_ir_add_data(t->storage, &m, t->id);
        if (node == UINT32_MAX)
            return lt_last_status();
        z->leaf_node = node;
        z->leaf_generation = gen;
    }
    v->node = z->leaf_node;
    v->out = 0;
    return LT_OK;
}

static lt_status record_step(const lt_view_step *step, lt_value in, lt_value *out)
{
    lt_meta om;
    lt_status st = lt_op_infer((lt_op)step->op, &step->in_meta, 1, &step->attrs, &om);
    if (st != LT_OK)
        return st;
    uint32_t node = lt_ir_add_op((lt_op)step->op, &in, 1, &step->attrs, &om);
    if (node == UINT32_MAX)
        return lt_last_status();
    out->node = node;
    out->out = 0;
    return LT_OK;
}

/* Applies view steps [0, n) to v. */
static lt_status apply_chain(const lt_view_step *chain, int n, lt_value v, lt_value *out)
{
    for (int i = 0; i < n; i++) {
        lt_status st = record_step(&chain[i], v, &v);
        if (st != LT_OK)
            return st;
    }
    *out = v;
    return LT_OK;
}

static bool view_is_current(const lt_tensor *t)
{
    const lt_lazy *z = L(t);
    return z->base_version == L(z->base)->version;
}

/* ---- roots in flight ----------------------------------------------------------- */

/* An op recorded while its input's value is still being computed by an
 * asynchronous barrier reads it through a placeholder buffer that receives
 * the data when that execution finishes. So the next step is traced while
 * this one runs; a barrier waits for the execution in flight before it
 * builds a graph, so no program ever reads a placeholder still empty. */
static lt_status future_leaf(lt_tensor *t, lt_value *v)
{
    lt_lazy *z = L(t);
    uint64_t gen = lt_ir_generation();
    if (!z->future) {
        size_t nbytes = (size_t)lt_shape_numel(t->shape, t->ndim) * lt_dtype_size((lt_dtype)t->dtype);
        if (!(z->future = lt_storage_placeholder(nbytes, "lazy")))
            return lt_last_status();
        z->future_generation = 0;
    }
    if (z->future_generation != gen) {
        lt_meta m = lt_tensor_meta(t);
        m.weak = 0;
        uint32_t node = lt_ir_add_data(z->future, &m, t->id);
        if (node == UINT32_MAX)
            return lt_last_status();
        z->future_node = node;
        z->future_generation = gen;
    }
    v->node = z->future_node;
    v->out = 0;
    return LT_OK;
}

bool lt_lazy_is_unfilled(const lt_storage *s) { return s->device.kind == LT_DEVICE_INVALID; }

void lt_lazy_fill_future(lt_tensor *t, lt_storage *s)
{
    lt_lazy *z = L(t);
    lt_storage *p = z->future;
    if (!p) {
        lt_lazy_set_data(t, s);
        return;
    }
    if (atomic_load(&s->refcount) == 1 && s->nbytes == p->nbytes) {
        p->data = s->data; /* the output is ours alone: take its buffer */
        s->data = NULL;
    } else if (s->nbytes == p->nbytes) { /* shared (a leaf returned as an output): copy it */
        p->data = lt_alloc(p->nbytes, "lazy");
        if (p->data)
            memcpy(p->data, s->data, p->nbytes);
    }
    if (!p->data && p->nbytes > 0) {
        /* out of memory: t keeps the output; what was traced from the
         * placeholder fails at its barrier (lt_lazy_is_unfilled) */
        lt_clear_error();
        lt_lazy_fail_future(t);
        lt_lazy_set_data(t, s);
        return;
    }
    z->future = NULL;
    lt_storage_unref(s);
    lt_lazy_set_data(t, p); /* p's reference moves to t */
    if (z->future_generation == lt_ir_generation()) { /* the leaf already recorded stays t's leaf */
        z->leaf_node = z->future_node;
        z->leaf_generation = z->future_generation;
    }
}

void lt_lazy_fail_future(lt_tensor *t)
{
    lt_lazy *z = L(t);
    lt_storage_unref(z->future); /* graphs reading it keep it, unfilled */
    z->future = NULL;
}

/* lt_lazy_value_of for a caller that owns the device already. */
static lt_status value_of(lt_tensor *t, lt_value *v)
{
    lt_lazy *z = L(t);
    if (z->inflight && !z->base)
        return future_leaf(t, v);
    bool base_inflight = z->base && L(z->base)->inflight;
    if (z->inflight) { /* a view that is a root of the execution in flight */
        lt_status st = lt_lazy_wait();
        if (st != LT_OK)
            return st;
        base_inflight = false;
    }
    if (z->base) {
        if (z->pending && z->generation == lt_ir_generation() && view_is_current(t)) {
            *v = z->value;
            return LT_OK;
        }
        if (t->storage && view_is_current(t) && !base_inflight)
            return leaf_of(t, v);
        lt_value base;
        lt_status st = value_of(z->base, &base);
        if (st == LT_OK)
            st = apply_chain(z->chain, z->nchain, base, v);
        if (st != LT_OK)
            return st;
        /* data memoized by an earlier read predates the base's new value
         * (a write through another view of the same base), and is stale */
        lt_storage_unref(t->storage);
        t->storage = NULL;
        z->base_version = L(z->base)->version;
        set_pending(t, *v);
        return LT_OK;
    }
    if (z->pending) {
        *v = z->value;
        return LT_OK;
    }
    if (t->storage)
        return leaf_of(t, v);
    if (z->is_scalar) { /* scalars are never materialized: re-record them */
        uint32_t node = lt_ir_add_scalar(z->scalar);
        if (node == UINT32_MAX)
            return lt_last_status();
        v->node = node;
        v->out = 0;
        set_pending(t, *v);
        return LT_OK;
    }
    if (z->discarded)
        return lt_error(LT_ERR_STATE, "lazy: tensor %llu was discarded by lt_lazy_discard before its value was "
                        "computed (it has no data)", (unsigned long long)t->id);
    return lt_error(LT_ERR_STATE, "lazy: tensor %llu has neither data nor a pending value",
                    (unsigned long long)t->id);
}

lt_status lt_lazy_value_of(lt_tensor *t, lt_value *v)
{
    if (lt_lazy_enter("lazy") != LT_OK)
        return lt_last_status();
    return value_of(t, v);
}

/* ---- recording ------------------------------------------------------------- */

/* Makes output k of a new node a lazy tensor. Views record their chain. */
static lt_tensor *make_output(lt_op op, lt_tensor *input, const lt_attrs *a, const lt_meta *om, uint32_t node,
                              int k)
{
    lt_tensor *t = new_lazy(&om[k]);
    if (!t)
        return NULL;
    lt_value v = {node, (uint32_t)k};
    set_pending(t, v);
    if (lt_op_infos[op].cls != LT_OPC_VIEW)
        return t;
    /* A view handle carries the strides and offset an eager view would
     * have, so that decisions made from them (reshape: view or copy? may
     * this view be written?) match eager, and an in-place update through
     * an expand can address its base's elements. */
    int64_t offset = 0;
    if (lt_view_geometry(op, input, a, &om[k], t->strides, &offset) != LT_OK) {
        lt_tensor_unref(t);
        return NULL;
    }
    t->offset = offset; /* into the root base's (contiguous) elements */
    lt_lazy *z = L(t), *src = L(input);
    lt_tensor *base = src->base ? src->base : input;
    int n = src->base ? src->nchain : 0;
    z->chain = malloc(sizeof *z->chain * (size_t)(n + 1));
    if (!z->chain) {
        lt_tensor_unref(t);
        lt_error(LT_ERR_MEMORY, "lazy: out of memory recording a view");
        return NULL;
    }
    if (n)
        memcpy(z->chain, src->chain, sizeof *z->chain * (size_t)n);
    z->chain[n].op = (uint16_t)op;
    z->chain[n].attrs = *a;
    z->chain[n].in_meta = lt_tensor_meta(input);
    z->nchain = n + 1;
    z->base = base;
    lt_tensor_hold(base); /* its state, not a reference of its user */
    z->base_version = L(base)->version;
    return t;
}

static lt_status gather_values(lt_tensor *const *in, int nin, lt_value *vals)
{
    for (int i = 0; i < nin; i++) {
        lt_status st = value_of(in[i], &vals[i]);
        if (st != LT_OK)
            return st;
    }
    return LT_OK;
}

static lt_status run_fallback(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                              const lt_meta *om, lt_tensor **out);

/*
 * TracingTime samples one traced op in TRACE_SAMPLE_EVERY: reading the clock
 * twice per op would cost a tenth of the op. The timer's count is therefore
 * the number of sampled ops; its total and percentiles describe one op.
 */
#define TRACE_SAMPLE_EVERY 16
static unsigned trace_ticks;

/* The start time when this op is sampled, else a negative value. */
static double trace_timer_start(void)
{
    return trace_ticks++ % TRACE_SAMPLE_EVERY == 0 ? lt_now_ms() : -1.0;
}

static void trace_timer_stop(double start)
{
    if (start >= 0)
        lt_metric_time("TracingTime", lt_now_ms() - start);
}

/* Records op over vals (of nin operands, the first of them `first`) and
 * makes its outputs. */
static lt_status record_outputs(lt_op op, const lt_value *vals, int nin, lt_tensor *first, const lt_attrs *a,
                                const lt_meta *om, lt_tensor **out)
{
    uint32_t node = lt_ir_add_op(op, vals, (uint32_t)nin, a, om);
    if (node == UINT32_MAX)
        return lt_last_status();
    for (int k = 0; k < lt_op_infos[op].nout; k++) {
        out[k] = make_output(op, first, a, om, node, k);
        if (!out[k]) {
            for (int j = 0; j < k; j++)
                lt_tensor_unref(out[j]);
            return lt_last_status();
        }
    }
    return LT_OK;
}

/* After an op is recorded: the sampled timer, then the growth check. */
static void op_recorded(lt_op op, double start, lt_status st)
{
    trace_timer_stop(start);
    if (st == LT_OK) {
        const char *call = lt_origin_current();
        lt_lazy_check_growth(call ? call : lt_op_name(op));
    }
}

lt_status lt_lazy_run(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                      lt_tensor **out)
{
    if (lt_op_infos[op].flags & LT_OPF_NOLOWER)
        return run_fallback(op, in, nin, a, om, out);
    double start = trace_timer_start();
    lt_value small[8];
    lt_value *vals = nin <= 8 ? small : malloc(sizeof *vals * (size_t)nin);
    if (!vals)
        return lt_error(LT_ERR_MEMORY, "lazy: out of memory");
    lt_status st = gather_values(in, nin, vals);
    if (st == LT_OK)
        st = record_outputs(op, vals, nin, nin ? in[0] : NULL, a, om, out);
    if (vals != small)
        free(vals);
    op_recorded(op, start, st);
    return st;
}

lt_status lt_lazy_run_scalar(lt_op op, lt_tensor *t, double s, bool reversed, const lt_attrs *a,
                             const lt_meta *om, lt_tensor **out)
{
    double start = trace_timer_start();
    /* the nodes a wrapped scalar tensor would give, in the same order: the
     * scalar's, then t's value, then the op */
    uint32_t scalar_node = lt_ir_add_scalar(s);
    if (scalar_node == UINT32_MAX)
        return lt_last_status();
    lt_value sv = {scalar_node, 0}, tv;
    lt_status st = value_of(t, &tv);
    if (st == LT_OK) {
        lt_value vals[2] = {reversed ? sv : tv, reversed ? tv : sv};
        st = record_outputs(op, vals, 2, reversed ? NULL : t, a, om, out);
    }
    op_recorded(op, start, st);
    return st;
}

lt_tensor *lt_lazy_wrap_scalar(double v)
{
    if (lt_lazy_enter("scalar") != LT_OK)
        return NULL;
    lt_meta m = lt_meta_make(LT_F64, NULL, 0);
    m.weak = 1;
    lt_tensor *t = new_lazy(&m);
    if (!t)
        return NULL;
    uint32_t node = lt_ir_add_scalar(v);
    if (node == UINT32_MAX) {
        lt_tensor_unref(t);
        return NULL;
    }
    lt_value val = {node, 0};
    set_pending(t, val);
    L(t)->is_scalar = true;
    L(t)->scalar = v;
    return t;
}

/* ---- in-place updates -------------------------------------------------------- */

static lt_status record(lt_op op, const lt_value *in, int nin, const lt_attrs *a, const lt_meta *in_meta,
                        lt_value *out)
{
    lt_meta om[LT_MAX_OUTPUTS];
    lt_status st = lt_op_infer(op, in_meta, nin, a, om);
    if (st != LT_OK)
        return st;
    uint32_t node = lt_ir_add_op(op, in, (uint32_t)nin, a, om);
    if (node == UINT32_MAX)
        return lt_last_status();
    out->node = node;
    out->out = 0;
    return LT_OK;
}

/* The inverse of one view step: rebuilds the step's input from its old
 * value and the new value of its output. */
static lt_status invert_step(const lt_view_step *step, lt_value old_in, lt_value new_out, const lt_meta *out_meta,
                             lt_value *result)
{
    lt_attrs a = lt_attrs_init();
    const lt_meta *im = &step->in_meta;
    switch ((lt_op)step->op) {
    case LT_OP_VIEW:
        a.ni = im->ndim;
        memcpy(a.i, im->shape, sizeof(int64_t) * (size_t)im->ndim);
        return record(LT_OP_VIEW, &new_out, 1, &a, out_meta, result);
    case LT_OP_PERMUTE:
        a.ni = (int32_t)step->attrs.ni;
        for (int d = 0; d < a.ni; d++)
            a.i[step->attrs.i[d]] = d;
        return record(LT_OP_PERMUTE, &new_out, 1, &a, out_meta, result);
    case LT_OP_SLICE:
    case LT_OP_SELECT:
    case LT_OP_DIAGONAL: {
        lt_op scatter = step->op == LT_OP_SLICE    ? LT_OP_SLICE_SCATTER
                        : step->op == LT_OP_SELECT ? LT_OP_SELECT_SCATTER
                                                   : LT_OP_DIAGONAL_SCATTER;
        lt_value ins[2] = {old_in, new_out};
        lt_meta metas[2] = {*im, *out_meta};
        return record(scatter, ins, 2, &step->attrs, metas, result);
    }
    default: /* expand: handled by scatter_into_base */
        return lt_error(LT_ERR_STATE, "lazy: no inverse for view step %s", lt_op_name((lt_op)step->op));
    }
}

static bool chain_has_expand(const lt_lazy *z)
{
    for (int i = 0; i < z->nchain; i++)
        if (z->chain[i].op == LT_OP_EXPAND)
            return true;
    return false;
}

/* Records a reshape (VIEW) of value in, of meta im, to shape. */
static lt_status record_reshape(lt_value in, const lt_meta *im, const int64_t *shape, int ndim, lt_value *out)
{
    lt_attrs a = lt_attrs_init();
    a.ni = ndim;
    if (ndim > 0)
        memcpy(a.i, shape, sizeof(int64_t) * (size_t)ndim);
    return record(LT_OP_VIEW, &in, 1, &a, im, out);
}

/* The flat positions (i64, shape [numel]) that view t addresses in its
 * base's contiguous buffer: offset + sum over dims of index * stride. */
static lt_status view_positions(const lt_tensor *t, lt_value *out)
{
    lt_attrs fa = lt_attrs_init();
    fa.dtype = LT_I64;
    fa.ni = t->ndim;
    memcpy(fa.i, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    fa.f[0] = (double)t->offset;
    fa.nf = 1;
    lt_value acc;
    lt_status st = record(LT_OP_FULL, NULL, 0, &fa, NULL, &acc);
    lt_meta am = lt_meta_make(LT_I64, t->shape, t->ndim);
    for (int d = 0; st == LT_OK && d < t->ndim; d++) {
        if (t->shape[d] <= 1 || t->strides[d] == 0)
            continue;
        lt_attrs ra = lt_attrs_init(); /* strides[d] * k for k < shape[d] */
        ra.dtype = LT_I64;
        ra.ni = 1;
        ra.i[0] = t->shape[d];
        ra.f[1] = (double)t->strides[d];
        ra.nf = 2;
        lt_value r;
        int64_t rs[LT_MAX_DIMS];
        for (int k = 0; k < t->ndim; k++)
            rs[k] = k == d ? t->shape[d] : 1;
        lt_meta rm = lt_meta_make(LT_I64, &t->shape[d], 1);
        st = record(LT_OP_ARANGE, NULL, 0, &ra, NULL, &r);
        if (st == LT_OK)
            st = record_reshape(r, &rm, rs, t->ndim, &r);
        if (st == LT_OK) {
            lt_value ins[2] = {acc, r};
            lt_meta ms[2] = {am, lt_meta_make(LT_I64, rs, t->ndim)};
            lt_attrs add = lt_attrs_init();
            st = record(LT_OP_ADD, ins, 2, &add, ms, &acc);
        }
    }
    int64_t n = lt_shape_numel(t->shape, t->ndim);
    return st == LT_OK ? record_reshape(acc, &am, &n, 1, out) : st;
}

/* The new value of t's root base (contiguous: every root base is) with
 * the elements that view t addresses replaced by v, as a scatter into the
 * flattened base. This inverts chains that hold an expand, which a step by
 * step inverse cannot (which copy of an expanded element was written?);
 * the strides answer it, as they do on cpu: a destination that passed the
 * dispatcher's overlap check addresses each base element at most once. */
static lt_status scatter_into_base(const lt_tensor *t, lt_value base, lt_value v, lt_value *out)
{
    const lt_tensor *b = L(t)->base;
    lt_meta bm = lt_tensor_meta(b), tm = lt_tensor_meta(t);
    bm.weak = tm.weak = 0;
    int64_t nb = lt_shape_numel(b->shape, b->ndim), nt = lt_shape_numel(t->shape, t->ndim);
    if (nt == 0) {
        *out = base;
        return LT_OK;
    }
    lt_value flat_base, pos, flat_v;
    lt_status st = record_reshape(base, &bm, &nb, 1, &flat_base);
    if (st == LT_OK)
        st = view_positions(t, &pos);
    if (st == LT_OK)
        st = record_reshape(v, &tm, &nt, 1, &flat_v);
    if (st != LT_OK)
        return st;
    lt_value ins[3] = {flat_base, pos, flat_v};
    lt_meta ms[3] = {lt_meta_make((lt_dtype)bm.dtype, &nb, 1), lt_meta_make(LT_I64, &nt, 1),
                     lt_meta_make((lt_dtype)tm.dtype, &nt, 1)};
    lt_attrs sa = lt_attrs_init(); /* dim 0 */
    lt_value scattered;
    st = record(LT_OP_SCATTER, ins, 3, &sa, ms, &scattered);
    return st == LT_OK ? record_reshape(scattered, &ms[0], bm.shape, bm.ndim, out) : st;
}

/* The new value of t's base when view t takes value v: through the inverse
 * of each view step (the paper's Figure 3). */
static lt_status invert_chain(lt_tensor *t, lt_value base_value, lt_value v, lt_value *w)
{
    lt_lazy *z = L(t);
    int n = z->nchain;
    lt_value *steps = malloc(sizeof *steps * (size_t)n); /* steps[i] = input of step i */
    if (!steps)
        return lt_error(LT_ERR_MEMORY, "lazy: out of memory");
    steps[0] = base_value;
    lt_status st = LT_OK;
    for (int i = 0; st == LT_OK && i + 1 < n; i++)
        st = record_step(&z->chain[i], steps[i], &steps[i + 1]);
    *w = v;
    lt_meta wm = lt_tensor_meta(t);
    wm.weak = 0;
    for (int i = n - 1; st == LT_OK && i >= 0; i--) {
        st = invert_step(&z->chain[i], steps[i], *w, &wm, w);
        wm = z->chain[i].in_meta;
    }
    free(steps);
    return st;
}

/* Substitutes new value v (of t's meta) into view t, rewriting its base.
 * Everything is recorded before anything is substituted, so a failure
 * leaves every tensor as it was. */
static lt_status update_view(lt_tensor *t, lt_value v)
{
    lt_lazy *z = L(t);
    lt_tensor *base = z->base;
    lt_value base_value, w;
    lt_status st = lt_lazy_value_of(base, &base_value);
    if (st == LT_OK)
        st = chain_has_expand(z) ? scatter_into_base(t, base_value, v, &w) : invert_chain(t, base_value, v, &w);
    if (st != LT_OK)
        return st;
    lt_lazy *b = L(base);
    set_pending(base, w);
    b->version++;
    lt_storage_unref(base->storage);
    base->storage = NULL;
    /* t's materialized data (if it was read) is stale from now on, however
     * its base version is set */
    lt_storage_unref(t->storage);
    t->storage = NULL;
    z->base_version = b->version;
    set_pending(t, v);
    return LT_OK;
}

/* The value written by an in-place op, cast/expanded to dst's meta. */
static lt_status inplace_value(lt_op op, lt_tensor *dst, lt_tensor *const *in, int nin, const lt_attrs *a,
                               const lt_meta *om, lt_value *v)
{
    lt_meta dm = lt_tensor_meta(dst);
    dm.weak = 0;
    lt_status st;
    if (op == LT_OP_FILL) {
        lt_attrs fa = *a;
        fa.ni = dm.ndim;
        memcpy(fa.i, dm.shape, sizeof(int64_t) * (size_t)dm.ndim);
        fa.dtype = dm.dtype;
        return record(LT_OP_FULL, NULL, 0, &fa, NULL, v);
    }
    lt_value vals[8];
    if (nin > 8)
        return lt_error(LT_ERR_ARGUMENT, "%s_: too many inputs", lt_op_name(op));
    if ((st = gather_values(in, nin, vals)) != LT_OK)
        return st;
    lt_meta cur;
    if (op == LT_OP_COPY) { /* copy_(dst, src): src, expanded and cast */
        *v = vals[1];
        cur = lt_tensor_meta(in[1]);
    } else {
        uint32_t node = lt_ir_add_op(op, vals, (uint32_t)nin, a, om);
        if (node == UINT32_MAX)
            return lt_last_status();
        v->node = node;
        v->out = 0;
        cur = om[0];
    }
    cur.weak = 0;
    if (!lt_shape_equal(cur.shape, cur.ndim, dm.shape, dm.ndim)) {
        lt_attrs ea = lt_attrs_init();
        ea.ni = dm.ndim;
        memcpy(ea.i, dm.shape, sizeof(int64_t) * (size_t)dm.ndim);
        if ((st = record(LT_OP_EXPAND, v, 1, &ea, &cur, v)) != LT_OK)
            return st;
        memcpy(cur.shape, dm.shape, sizeof(int64_t) * (size_t)dm.ndim);
        cur.ndim = dm.ndim;
    }
    if (cur.dtype != dm.dtype || op == LT_OP_COPY) {
        /* copy_ always records a cast so the destination gets a node of
         * its own even when src already has its dtype */
        lt_attrs ca = lt_attrs_init();
        ca.dtype = dm.dtype;
        if ((st = record(LT_OP_CAST, v, 1, &ca, &cur, v)) != LT_OK)
            return st;
    }
    return LT_OK;
}

lt_status lt_lazy_run_inplace(lt_op op, lt_tensor *dst, lt_tensor *const *in, int nin, const lt_attrs *a,
                              const lt_meta *om)
{
    double start = trace_timer_start();
    /* A root in flight takes no new value before its data has arrived:
     * the data would overwrite it. So an in-place write into it, or into a
     * view of it, waits (fill/copy do not even read dst). */
    bool into_inflight = L(dst)->inflight || (L(dst)->base && L(L(dst)->base)->inflight);
    if (into_inflight && lt_lazy_wait() != LT_OK)
        return lt_last_status();
    lt_value v;
    lt_status st = inplace_value(op, dst, in, nin, a, om, &v);
    if (st == LT_OK) {
        if (L(dst)->base) {
            st = update_view(dst, v);
        } else {
            /* a data leaf keeps the buffer even when the op does not read
             * it (fill_, copy_): lt_lazy_discard goes back to it */
            lt_value last;
            if (dst->storage && !L(dst)->pending && (st = leaf_of(dst, &last)) != LT_OK)
                return st;
            set_pending(dst, v);
            L(dst)->version++;
            lt_storage_unref(dst->storage); /* the graph's leaf keeps it */
            dst->storage = NULL;
        }
    }
    trace_timer_stop(start);
    return st;
}

/* ---- transfers and syncs ------------------------------------------------------- */

/* A lazy tensor owning storage s (one reference is taken over). */
static lt_tensor *wrap_storage(lt_storage *s, const lt_meta *m)
{
    lt_tensor *t = new_lazy(m);
    if (!t) {
        lt_storage_unref(s);
        return NULL;
    }
    t->storage = s;
    return t;
}

lt_tensor *lt_lazy_from_cpu(lt_tensor *cpu)
{
    if (lt_lazy_enter("to") != LT_OK)
        return NULL;
    double start = lt_now_ms();
    lt_meta m = lt_tensor_meta(cpu);
    m.weak = 0;
    size_t nbytes = (size_t)lt_shape_numel(m.shape, m.ndim) * lt_dtype_size((lt_dtype)m.dtype);
    lt_tensor *c = lt_eager_as_contiguous(cpu, (lt_dtype)cpu->dtype, "to");
    if (!c)
        return NULL;
    const lt_backend *be = lt_lazy_current_backend();
    lt_storage *s = be->buffer_alloc(nbytes);
    lt_status st = s ? be->copy_from_host(s, lt_tensor_ptr(c), nbytes) : lt_last_status();
    lt_tensor_unref(c);
    if (st != LT_OK) {
        lt_storage_unref(s);
        return NULL;
    }
    lt_tensor *t = wrap_storage(s, &m);
    if (t) {
        lt_metric_add("TransferToDevice", 1);
        lt_metric_time("TransferTime", lt_now_ms() - start);
    }
    return t;
}

/* A CPU handle sharing t's (current) storage. */
static lt_tensor *cpu_alias(lt_tensor *t)
{
    lt_meta m = lt_tensor_meta(t);
    m.weak = t->weak;
    lt_tensor *a = lt_tensor_new_handle(&m, lt_device_cpu());
    if (!a)
        return NULL;
    a->storage = t->storage;
    atomic_fetch_add(&a->storage->refcount, 1);
    return a;
}

static bool has_current_data(lt_tensor *t)
{
    lt_lazy *z = L(t);
    if (z->base)
        return t->storage && view_is_current(t) && !z->pending;
    return !z->pending && t->storage;
}

lt_tensor *lt_lazy_sync_to_cpu_alias(lt_tensor *t, const char *why)
{
    if (lt_lazy_enter(why) != LT_OK)
        return NULL;
    if ((L(t)->inflight || (L(t)->base && L(L(t)->base)->inflight)) && lt_lazy_wait() != LT_OK)
        return NULL;
    if (!has_current_data(t)) {
        if (L(t)->base) { /* a view must be computed as a root of its own */
            lt_value v;
            if (lt_lazy_value_of(t, &v) != LT_OK)
                return NULL;
        }
        /* t is named as the tensor this sync is for, even when it is a root
         * anyway: a failing sync retries with it alone */
        if (lt_lazy_barrier_with(false, why, &t, 1) != LT_OK)
            return NULL;
    }
    return cpu_alias(t);
}

/* Installs output storage s (reference taken over) as t's data. */
void lt_lazy_set_data(lt_tensor *t, lt_storage *s)
{
    lt_lazy *z = L(t);
    z->inflight = false;
    lt_storage_unref(t->storage);
    t->storage = s;
    s->device = t->device;
    z->leaf_generation = 0; /* a leaf memoized for the old buffer is stale */
    if (z->base)
        z->base_version = L(z->base)->version;
    lt_lazy_clear_pending(t);
}

/* ---- fallback ------------------------------------------------------------------ */

static lt_status run_fallback(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a,
                              const lt_meta *om, lt_tensor **out)
{
    char metric[96];
    snprintf(metric, sizeof metric, "Fallback.%s", lt_op_name(op));
    lt_metric_add("Fallback", 1);
    lt_metric_add(metric, 1);
    lt_tensor *cpu_in[8] = {NULL};
    if (nin > 8)
        return lt_error(LT_ERR_ARGUMENT, "%s: too many inputs for a fallback", lt_op_name(op));
    lt_status st = LT_OK;
    for (int i = 0; i < nin && st == LT_OK; i++) {
        cpu_in[i] = lt_lazy_sync_to_cpu_alias(in[i], lt_op_name(op));
        if (!cpu_in[i])
            st = lt_last_status();
    }
    lt_tensor *cpu_out[LT_MAX_OUTPUTS] = {NULL};
    if (st == LT_OK)
        st = lt_eager_run(op, cpu_in, nin, a, om, cpu_out, lt_device_cpu());
    for (int i = 0; i < nin; i++)
        if (cpu_in[i])
            lt_tensor_unref(cpu_in[i]);
    for (int k = 0; k < lt_op_infos[op].nout; k++) {
        out[k] = NULL;
        if (st == LT_OK) {
            out[k] = lt_lazy_from_cpu(cpu_out[k]);
            if (!out[k])
                st = lt_last_status();
        }
        if (cpu_out[k])
            lt_tensor_unref(cpu_out[k]);
    }
    if (st != LT_OK)
        for (int k = 0; k < lt_op_infos[op].nout; k++)
            if (out[k])
                lt_tensor_unref(out[k]), out[k] = NULL;
    return st;
}

/* ---- aliases ------------------------------------------------------------------- */

lt_tensor *lt_lazy_alias(lt_tensor *t)
{
    if (lt_lazy_enter("detach") != LT_OK)
        return NULL;
    lt_value v;
    bool data = has_current_data(t) && !L(t)->base;
    if (!data && lt_lazy_value_of(t, &v) != LT_OK)
        return NULL;
    lt_meta m = lt_tensor_meta(t);
    m.weak = t->weak;
    lt_tensor *a = new_lazy(&m);
    if (!a)
        return NULL;
    if (data) { /* buffers are never written in place while shared */
        a->storage = t->storage;
        atomic_fetch_add(&a->storage->refcount, 1);
    } else {
        set_pending(a, v);
    }
    L(a)->is_scalar = L(t)->is_scalar;
    L(a)->scalar = L(t)->scalar;
    return a;
}
