/* graph.h - canonical graphs built from the IR arena (see graph.c). */
#ifndef LT_LAZY_GRAPH_H
#define LT_LAZY_GRAPH_H

#include "backend/backend.h"
#include "lazy/lazy.h"

typedef struct lt_gbuild {
    lt_graph g;             /* the canonical graph (arrays owned here) */
    uint64_t key[2];        /* 128-bit graph key */
    lt_storage **leaves;    /* per leaf slot: the buffer (not retained) */
    uint64_t *leaf_ids;     /* per leaf, in visit order: its tensor's id */
    double *scalars;        /* per scalar slot: this run's value */
    uint32_t *canon;        /* arena node -> canonical index */
    uint32_t node_cap, input_cap, leaf_cap, leaf_id_cap, scalar_cap;
} lt_gbuild;

/* Builds the canonical graph of the given root values. */
lt_status lt_gbuild_run(lt_gbuild *b, const lt_value *roots, uint32_t nroots);
void lt_gbuild_free(lt_gbuild *b);

/* Writes the graph in the paper's text form / as Graphviz DOT (snprintf
 * semantics). */
int lt_graph_text(const lt_graph *g, const double *scalars, char *buf, size_t cap);
int lt_graph_dot(const lt_graph *g, const double *scalars, char *buf, size_t cap);

#endif
