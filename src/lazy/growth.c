/*
 * growth.c - a pending graph that grows without a barrier.
 *
 * A loop that never calls lt_mark_step keeps adding to one graph, silently,
 * until something reads a value; then that graph (tens of thousands of
 * nodes) compiles for a long time. After every recorded op the lazy device
 * compares the IR nodes recorded since the last barrier with
 * LT_GRAPH_WARN_NODES (default 10000, 0: never) and, past it, warns once
 * on stderr, naming the public call that recorded the latest node. With
 * LT_AUTO_BARRIER=1 it also cuts the graph there with a barrier that does
 * not donate (like a read), so results are those of the same program with
 * a barrier placed by hand, and no graph grows far past the threshold.
 * Counters: "GraphSizeWarnings", "AutoBarriers".
 */
#include "lazy/lazy.h"

#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_WARN_NODES 10000

static struct {
    bool configured;
    uint32_t limit;      /* nodes; 0: no check */
    bool auto_barrier;
    bool warned;
    uint32_t next_try;   /* after a failed automatic barrier: the next size to try at */
} growth;

static void configure(void)
{
    const char *v = getenv("LT_GRAPH_WARN_NODES");
    char *end = NULL;
    long n = v && *v ? strtol(v, &end, 10) : DEFAULT_WARN_NODES;
    if (v && *v && (*end != '\0' || n < 0)) {
        fprintf(stderr, "lazytensor: LT_GRAPH_WARN_NODES=%s is not a node count; using %d\n", v,
                DEFAULT_WARN_NODES);
        n = DEFAULT_WARN_NODES;
    }
    growth.limit = n > (long)UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)n;
    const char *a = getenv("LT_AUTO_BARRIER");
    growth.auto_barrier = a && a[0] == '1' && a[1] == '\0';
    growth.configured = true;
}

void lt_lazy_set_growth_limit(uint32_t nodes, bool auto_barrier)
{
    growth.configured = true;
    growth.limit = nodes;
    growth.auto_barrier = auto_barrier;
    growth.warned = false;
    growth.next_try = 0;
}

static void warn_once(uint32_t nodes, const char *call)
{
    if (growth.warned)
        return;
    growth.warned = true;
    lt_metric_add("GraphSizeWarnings", 1);
    fprintf(stderr,
            "lazytensor: warning: %u IR nodes recorded on the lazy device without a barrier (the latest by "
            "%s); %s\n",
            nodes, call,
            growth.auto_barrier
                ? "cutting the graph here with a barrier (LT_AUTO_BARRIER=1), and each time it grows this "
                  "large again"
                : "a graph this large takes long to compile: end each step with lt_mark_step() or "
                  "lt_step_end(), or set LT_AUTO_BARRIER=1 (threshold: LT_GRAPH_WARN_NODES)");
}

void lt_lazy_check_growth(const char *call)
{
    if (!growth.configured)
        configure();
    uint32_t nodes = lt_ir_node_count();
    if (growth.limit == 0 || nodes < growth.limit || nodes < growth.next_try)
        return;
    warn_once(nodes, call);
    if (!growth.auto_barrier)
        return;
    lt_metric_add("AutoBarriers", 1);
    if (lt_lazy_barrier(false, "LT_AUTO_BARRIER") == LT_OK) {
        growth.next_try = 0;
        return;
    }
    /* Nothing changed (a barrier is a transaction): the failure shows again
     * at the next barrier the program asks for. Retry only once the graph
     * has doubled, not after every op. */
    lt_clear_error();
    growth.next_try = nodes * 2;
}
