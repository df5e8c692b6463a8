/* graph.h - canonical graphs built from the IR arena (see graph.c). */
#ifndef LT_LAZY_GRAPH_H
#define LT_LAZY_GRAPH_H

#include "backend/backend.h"
#include "lazy/lazy.h"

/* An index operand that a DATAFAIL op of the graph checks when it runs:
 * every element must lie in [0, limit). */
typedef struct lt_gcheck {
    lt_value index; /* arena value */
    int64_t limit;
} lt_gcheck;

typedef struct lt_gbuild {
    lt_graph g;             /* the canonical graph (arrays owned here) */
    uint64_t key[2];        /* 128-bit graph key */
    lt_storage **leaves;    /* per leaf slot: the buffer (not retained) */
    uint64_t *leaf_ids;     /* per leaf slot: its tensor's id */
    bool may_fail;          /* a node can fail on its input values (DATAFAIL) */
    bool unchecked_fail;    /* ... in a way that `checks` do not cover */
    lt_gcheck *checks;      /* distinct index checks of the DATAFAIL nodes */
    uint32_t nchecks, check_cap;
    double *scalars;        /* per scalar slot: this run's value */
    uint32_t *canon;        /* arena node -> canonical index */
    uint32_t node_cap, input_cap, leaf_cap, leaf_id_cap, scalar_cap;
} lt_gbuild;

/* Builds the canonical graph of the given root values. */
lt_status lt_gbuild_run(lt_gbuild *b, const lt_value *roots, uint32_t nroots);
void lt_gbuild_free(lt_gbuild *b);

/* Can node n fail at run time because of its input values? */
bool lt_gnode_may_fail(const lt_gnode *n);

/* Writes the graph in the paper's text form / as Graphviz DOT (snprintf
 * semantics). */
int lt_graph_text(const lt_graph *g, const double *scalars, char *buf, size_t cap);
int lt_graph_dot(const lt_graph *g, const double *scalars, char *buf, size_t cap);

#endif
