/*
 * backend.h - the interface between the lazy device and whatever executes
 * its graphs.
 *
 * The lazy layer hands a backend a canonical graph (nodes in post-order,
 * inputs as indices into that order, leaves and scalar parameters as
 * slots): the backend compiles it once into an executable, which is cached
 * under the graph key and run many times with different buffers and scalar
 * values. Buffers live in host memory for every backend so far, so the
 * buffer functions are the caching allocator's.
 */
#ifndef LT_BACKEND_H
#define LT_BACKEND_H

#include "ops/ops.h"

/* One node of a canonical graph. */
typedef struct lt_gnode {
    uint8_t kind;   /* lt_node_kind */
    uint8_t nout;
    uint16_t op;
    uint32_t nin;
    uint32_t first_input;                 /* into lt_graph.inputs */
    lt_meta out[LT_MAX_OUTPUTS];
    lt_attrs attrs;
    int16_t attr_param[LT_ATTR_FLOATS];   /* scalar slot of attrs.f[k], -1 if baked */
    int32_t slot;   /* DATA: leaf slot; SCALAR: scalar slot or -1 if baked */
    double scalar;  /* SCALAR: the baked value (0 or 1) */
    /* OP: the public function that recorded it (NULL: the op itself) and
     * whether it is part of that function's gradient; for messages only,
     * not part of the graph key */
    const char *origin;
    bool origin_backward;
} lt_gnode;

typedef struct lt_gvalue {
    uint32_t node, out;
} lt_gvalue;

typedef struct lt_graph {
    lt_gnode *nodes;
    uint32_t nnodes;
    lt_gvalue *inputs;
    uint32_t ninputs;
    lt_gvalue *roots;
    uint32_t nroots;
    uint32_t nleaves, nscalars;
} lt_graph;

/* Inputs and outputs of one execution. */
typedef struct lt_exec_args {
    lt_storage **leaves;     /* nleaves buffers, in slot order */
    const double *scalars;   /* nscalars values, in slot order */
    const bool *donatable;   /* per leaf: may be overwritten by an output */
    lt_storage **outputs;    /* nroots results (references for the caller) */
    int64_t donated;         /* set by the backend: buffers reused */
    uint32_t failed_node;    /* set by the backend when a node's kernel fails:
                              * its index (UINT32_MAX: none, or unknown) */
} lt_exec_args;

typedef struct lt_backend {
    const char *name;
    /* Compiles g (which the backend may not keep) into an executable. */
    void *(*compile)(const lt_graph *g);
    /* Runs an executable. On failure the outputs are freed and no leaf
     * buffer was written unless args->donatable allowed it (the lazy layer
     * allows it only for programs that cannot fail on their data). */
    lt_status (*execute)(void *exe, lt_exec_args *args);
    /* Frees an executable. */
    void (*release)(void *exe);
    /* A device buffer of nbytes (refcount 1; freed by lt_storage_unref). */
    lt_storage *(*buffer_alloc)(size_t nbytes);
    /* Copies between a device buffer and host memory. */
    lt_status (*copy_to_host)(const lt_storage *s, void *dst, size_t nbytes);
    lt_status (*copy_from_host)(lt_storage *s, const void *src, size_t nbytes);
    /* True if device buffers are host memory that the CPU may read in place
     * (then a synced lazy tensor is read without a copy). */
    bool host_visible;

    /* Optional (NULL: compile only): compile split in its quick part and its
     * slow part, for a tiered backend that runs the graph on a first tier
     * while the slow part runs on another thread.
     * compile_start does the quick part on the caller's thread and returns
     * an executable (NULL and an error on failure); *ready tells whether it
     * can run now (say, a program found in a cache). One that is not ready
     * must go through compile_finish before execute; release frees it in
     * either state. */
    void *(*compile_start)(const lt_graph *g, bool *ready);
    /* The slow part. Safe on any thread, one call per executable: it touches
     * nothing but exe and thread-safe services (metrics, the compiler
     * driver), never lazy-layer state. On failure the error is set and exe
     * stays unready (release it). */
    lt_status (*compile_finish)(void *exe);
    /* Optional (NULL: nothing runs in the background): waits until no
     * background work of the backend (compiles) is queued or running. */
    void (*wait_idle)(void);
} lt_backend;

/* Host-memory buffer functions, shared by backends whose buffers are
 * host memory. */
lt_storage *lt_host_buffer_alloc(size_t nbytes);
lt_status lt_host_copy_to_host(const lt_storage *s, void *dst, size_t nbytes);
lt_status lt_host_copy_from_host(lt_storage *s, const void *src, size_t nbytes);

/* The reference backend: runs the graph node by node with eager kernels. */
const lt_backend *lt_backend_interp(void);

/* The tiered backend (tiered.c): a graph with no native program ready runs
 * on interp at once while the cpu backend compiles it in the background. */
const lt_backend *lt_backend_tiered(void);

/* A deep copy of g (caller frees with lt_graph_free), or NULL. */
lt_graph *lt_graph_copy(const lt_graph *g);
void lt_graph_free(lt_graph *g);

#endif
