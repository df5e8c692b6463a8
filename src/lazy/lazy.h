/*
 * lazy.h - the lazy device: IR recording, live-tensor registry, views and
 * in-place substitution, barrier, program cache, fallback, metrics, dumps.
 *
 * The device belongs to one thread at a time (like a CUDA stream): the
 * first thread that uses it, until that thread calls
 * lt_lazy_release_thread() or exits. Every entry point calls
 * lt_lazy_enter, which refuses other threads with LT_ERR_STATE (the run
 * functions leave it to the dispatcher, which calls it once per op). The
 * barrier's worker thread only runs programs on buffers it holds.
 */
#ifndef LT_LAZY_H
#define LT_LAZY_H

#include "eager/eager.h"

#include <pthread.h>
#include <stdio.h>

/* ---- IR ------------------------------------------------------------------ */

typedef enum lt_node_kind {
    LT_NODE_OP = 0,   /* an op of ops.def */
    LT_NODE_DATA = 1, /* a device-data leaf: a contiguous buffer */
    LT_NODE_SCALAR = 2 /* a wrapped C scalar (0-d f64, weak) */
} lt_node_kind;

/* One output of one node. */
typedef struct lt_value {
    uint32_t node;
    uint32_t out;
} lt_value;

/* The public function that recorded a node: the one the user called (the
 * outermost library function), and whether the node belongs to the
 * gradient of that function. name == NULL: the op itself is the public
 * function. Failures at run time are reported under this name. */
typedef struct lt_origin {
    const char *name; /* static storage */
    bool backward;
} lt_origin;

/*
 * A node of the arena. Output metadata and non-default attributes live in
 * side lists of the arena (lt_ir_out, lt_ir_attrs), so that a node is a
 * quarter of its inline size: recording an op writes about 180 bytes, not
 * 450, which is most of what tracing a tiny op costs once the arena
 * outgrows the caches.
 */
typedef struct lt_node {
    uint8_t kind;
    uint8_t nout;
    uint16_t op;
    uint32_t nin;
    uint32_t first_input;      /* index into the arena's input list */
    uint32_t first_meta;       /* out[0] in the arena's meta list; nout follow */
    uint32_t attrs_index;      /* in the arena's attribute list, or LT_IR_DEFAULT_ATTRS */
    uint64_t local_hash[2];    /* op, attrs, output metas (no operands) */
    uint64_t hash[2];          /* local hash combined with operand hashes */
    double scalar;             /* LT_NODE_SCALAR */
    lt_storage *storage;       /* LT_NODE_DATA: retained buffer */
    uint64_t tensor_id;        /* LT_NODE_DATA: the tensor it came from */
    lt_origin origin;          /* LT_NODE_OP: who recorded it (not hashed) */
} lt_node;

/* attrs_index of a node whose attributes are lt_attrs_init's (most ops). */
#define LT_IR_DEFAULT_ATTRS UINT32_MAX

/* Is this scalar value baked into the graph (0 and 1), or a parameter? */
static inline bool lt_scalar_is_special(double v) { return v == 0.0 || v == 1.0; }

/* The process-wide graph arena. Nodes are addressed by 32-bit indices; the
 * arena is reset when no live tensor refers to it any more. */
uint64_t lt_ir_generation(void);
const lt_node *lt_ir_node(uint32_t index);
const lt_value *lt_ir_inputs(const lt_node *n);
/* Output k (< n->nout) of node n, and its attributes (an op node's; the
 * defaults for leaves). Valid until the arena grows or is reset. */
const lt_meta *lt_ir_out(const lt_node *n, int k);
const lt_attrs *lt_ir_attrs(const lt_node *n);
uint32_t lt_ir_node_count(void);
/* Records an op node over input values; returns its index or UINT32_MAX. */
uint32_t lt_ir_add_op(lt_op op, const lt_value *in, uint32_t nin, const lt_attrs *a, const lt_meta *om);
uint32_t lt_ir_add_data(lt_storage *s, const lt_meta *m, uint64_t tensor_id);
uint32_t lt_ir_add_scalar(double v);
/* 128-bit hash helpers shared with the graph key. */
void lt_ir_hash_init(uint64_t h[2]);
void lt_ir_hash_u64(uint64_t h[2], uint64_t v);
/* Drops every node (releasing data buffers) and starts a new generation. */
void lt_ir_reset(void);

/* Origins (per thread). A composite public function (cross_entropy) calls
 * lt_origin_enter with its name and lt_origin_restore with the result when
 * it returns: the ops it records carry its name unless an outer public
 * function already named them. The backward engine runs each gradient
 * formula under lt_origin_enter_backward(forward output, op): its ops carry
 * the origin of the forward op, marked backward. */
lt_origin lt_origin_enter(const char *name);
lt_origin lt_origin_enter_backward(const lt_tensor *forward_out, lt_op op);
/* Makes o the current origin; returns the one it replaces. */
lt_origin lt_origin_set(lt_origin o);
static inline void lt_origin_restore(lt_origin saved) { (void)lt_origin_set(saved); }

/* ---- lazy tensor state --------------------------------------------------- */

/* A view step recorded on a lazy view tensor. */
typedef struct lt_view_step {
    uint16_t op;
    lt_attrs attrs;
    lt_meta in_meta; /* the meta of the step's input */
} lt_view_step;

typedef struct lt_lazy {
    lt_value value;           /* pending IR value, valid when pending */
    bool pending;
    uint64_t generation;      /* arena generation of value */
    uint64_t version;         /* bumped by every in-place update */
    lt_tensor *prev, *next;   /* live registry, in id order */
    lt_tensor *base;          /* retained root base when this is a view */
    lt_view_step *chain;      /* view steps from base to this tensor */
    int nchain;
    uint64_t base_version;    /* base version the value was derived from */
    bool inflight;            /* its data is being computed asynchronously */
    bool is_scalar;           /* a wrapped C scalar: its value is `scalar` */
    double scalar;
    uint32_t leaf_node;       /* memoized data leaf in `generation` */
    uint64_t leaf_generation;
    bool discarded;           /* its pending value was dropped by lt_lazy_discard */
    /* In flight and read by an op recorded meanwhile: the placeholder buffer
     * its data will arrive in (device kind LT_DEVICE_INVALID until then)
     * and the IR leaf made of it (see lt_lazy_fill_future) */
    lt_storage *future;
    uint32_t future_node;
    uint64_t future_generation;
} lt_lazy;

/* Device-level entry points used by the dispatcher. */
void lt_lazy_init(void);
/* LT_OK if this thread owns the lazy device (taking it when nobody does),
 * else LT_ERR_STATE naming op and the owning thread (owner.c). */
lt_status lt_lazy_enter(const char *op);
/* The same without an error: true if this thread owns the device. */
bool lt_lazy_try_own(void);
/* Records op (outputs of metas om) over lazy inputs. The run functions
 * leave the owner check to their caller, the dispatcher, which makes it
 * once per public call before it reads any input (lt_lazy_enter). */
lt_status lt_lazy_run(lt_op op, lt_tensor *const *in, int nin, const lt_attrs *a, const lt_meta *om,
                      lt_tensor **out);
lt_status lt_lazy_run_inplace(lt_op op, lt_tensor *dst, lt_tensor *const *in, int nin,
                              const lt_attrs *a, const lt_meta *om);
/* Binary op of t and the C scalar s (t op s, or s op t when reversed),
 * recorded with the same IR nodes as lt_lazy_run over t and
 * lt_lazy_wrap_scalar(s), without making the scalar a tensor. Not for ops
 * that fall back to eager (LT_OPF_NOLOWER) or views. */
lt_status lt_lazy_run_scalar(lt_op op, lt_tensor *t, double s, bool reversed, const lt_attrs *a,
                             const lt_meta *om, lt_tensor **out);
lt_tensor *lt_lazy_wrap_scalar(double v);
/* A lazy tensor holding a contiguous copy of a CPU tensor (transfer). */
lt_tensor *lt_lazy_from_cpu(lt_tensor *cpu);
/* Makes t's data current (runs the barrier if needed) and returns a CPU
 * handle aliasing it (caller owns it), or NULL on error. */
lt_tensor *lt_lazy_sync_to_cpu_alias(lt_tensor *t, const char *why);

/* A new lazy tensor with t's current value and no view or autograd state
 * (sharing t's buffer when t has data). */
lt_tensor *lt_lazy_alias(lt_tensor *t);

/* Current IR value of a lazy tensor (creating a data leaf, or re-deriving a
 * view from its base, as needed). */
lt_status lt_lazy_value_of(lt_tensor *t, lt_value *v);

/* Registry iteration (id order). */
lt_tensor *lt_lazy_registry_first(void);
lt_tensor *lt_lazy_registry_next(lt_tensor *t);
int64_t lt_lazy_pending_count(void);
/* Takes t out of the registry / puts it back at its place in id order. */
void lt_lazy_registry_unlink(lt_tensor *t);
void lt_lazy_registry_insert(lt_tensor *t);

/* Exchanges the payloads of two handles of one dtype and shape, keeping
 * each handle's identity (lt_tensor_swap_payload), where one or both are
 * lazy: waits for an execution in flight, keeps the registry in id order,
 * and forgets leaves memoized under the other handle's id. Neither may be
 * a lazy view or the base of one (the caller checks). */
lt_status lt_lazy_swap_payload(lt_tensor *to, lt_tensor *from);
/* Turns every lazy view of base into an ordinary tensor with the value it
 * has now (no longer derived from base), so that base may move. */
lt_status lt_lazy_detach_views(lt_tensor *base);

/* ---- barrier -------------------------------------------------------------- */

/* Runs all pending IR. `step` allows donation; `why` names the API call
 * that forced it (LT_DEBUG). */
lt_status lt_lazy_barrier(bool step, const char *why);
/* The same, also materializing the given tensors even if they are views. */
lt_status lt_lazy_barrier_with(bool step, const char *why, lt_tensor *const *extra, int nextra);
/* The barrier; with wait == false the execution runs on a worker thread and
 * its roots are marked in flight until lt_lazy_wait installs their data. */
lt_status lt_lazy_barrier_async(bool step, bool wait, const char *why, lt_tensor *const *extra, int nextra);
/* Waits for the execution in flight, if any, and installs its results. */
lt_status lt_lazy_wait(void);
/* Installs an output buffer (reference taken over) as t's data. */
void lt_lazy_set_data(lt_tensor *t, lt_storage *s);
/* Installs the output buffer s (reference taken over) of a root that was in
 * flight: when an op recorded meanwhile read it through a placeholder
 * buffer, the data moves into the placeholder, which becomes t's data. */
void lt_lazy_fill_future(lt_tensor *t, lt_storage *s);
/* A root in flight whose step failed: its placeholder, if any, stays
 * without data, and any graph reading it fails (see graph.c). */
void lt_lazy_fail_future(lt_tensor *t);
/* True for a placeholder buffer that never received its data. */
bool lt_lazy_is_unfilled(const lt_storage *s);
/* Drops t's pending value. */
void lt_lazy_clear_pending(lt_tensor *t);
/* Makes v (of the current arena generation) t's pending value. */
void lt_lazy_set_pending(lt_tensor *t, lt_value v);
/* Resets the IR arena if no tensor has a pending value. */
void lt_lazy_reset_if_idle(void);

/* After an op is recorded: warns once when the IR recorded since the last
 * barrier passes LT_GRAPH_WARN_NODES and, with LT_AUTO_BARRIER=1, cuts it
 * with a barrier (growth.c). `call` names the public function. */
void lt_lazy_check_growth(const char *call);
/* Sets the threshold (0: none) and the automatic barrier, in place of the
 * environment (for tests). */
void lt_lazy_set_growth_limit(uint32_t nodes, bool auto_barrier);
/* The public function being recorded on this thread, or NULL. */
const char *lt_origin_current(void);

/* The backend that compiles and runs the lazy device's graphs. */
const struct lt_backend *lt_lazy_current_backend(void);

/* ---- metrics --------------------------------------------------------------- */

/* Text appended piece by piece with snprintf semantics over the whole text
 * (buf may be NULL with cap 0; used counts what the whole text needs). */
typedef struct lt_text {
    char *buf;
    size_t cap, used;
} lt_text;
void lt_text_put(lt_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void lt_metric_add(const char *name, int64_t delta);
/* Counters bumped on every traced op: fixed slots, no lookup by name
 * (lt_metrics_counter and the report know them by name all the same). */
typedef enum lt_hot_counter { LT_HOT_TENSORS_CREATED, LT_HOT_TENSORS_DESTROYED, LT_HOT_COUNT } lt_hot_counter;
void lt_metric_bump(lt_hot_counter c);
void lt_metric_set(const char *name, int64_t value);
void lt_metric_time(const char *name, double ms);
double lt_now_ms(void);

#endif
