/*
 * explain.c - why the lazy device compiled a graph.
 *
 * A graph compiles when its key is not in the program cache. The key says
 * nothing a person can read, so on a miss (and only then: a cache hit and
 * tracing cost nothing here) the new canonical graph is compared with the
 * graphs compiled most recently (copies in a ring of HISTORY, holding at
 * most HISTORY_NODES nodes), and the nearest one names the cause:
 *
 *   shape / dtype  an input (a data leaf) or an op's result has another
 *                  shape or dtype: the input, its first reader and both
 *                  metas are named;
 *   scalar         a scalar became special: 0 and 1 are compiled into the
 *                  program, every other value is a runtime parameter, so
 *                  0.5 -> 2 hits the cache but 0.5 -> 1 compiles again;
 *   structure      another op, other operands or other attributes: the
 *                  first node where the graphs part, with both ops;
 *   outputs        the same nodes, another set of live tensors to compute;
 *   evicted        the very same graph was compiled before and dropped from
 *                  the cache (LT_CACHE_SIZE) or built for another backend;
 *   first          nothing compiled yet to compare with.
 *
 * Nodes are named by the public function that recorded them (the IR node's
 * origin, which costs tracing one pointer and is not hashed). "Nearest":
 * the same graph, else the same structure with the fewest differing nodes,
 * else the same nodes in another order, else the longest common prefix;
 * the most recent graph wins a tie. Each cause is counted
 * ("CompileCause<Cause>"), kept for lt_lazy_last_compile_cause and printed
 * under LT_DEBUG. Compiles after the warm-up (the first WARMUP_STEPS step
 * barriers) are counted too, for lt_metrics_report's problems section.
 *
 * A program that fails at run time is reported here too, under the public
 * function that recorded the failing node and the op it was lowered to.
 */
#include "lazy/explain.h"

#include <stdlib.h>
#include <string.h>

#define HISTORY 16              /* graphs kept for comparison (copies) */
#define HISTORY_NODES (1u << 16) /* ... holding this many nodes at most (about 26 MB), or one graph */
#define WARMUP_STEPS 2 /* compiles in the first steps are expected */

typedef struct seen_graph {
    lt_graph *g;
    uint64_t key[2];
    const lt_backend *backend;
} seen_graph;

static seen_graph history[HISTORY];
static unsigned history_next; /* the ring slot written next: the oldest */
static uint64_t history_nodes; /* nodes held by the ring */

/* The latest barrier's cause, readable from any thread. */
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static lt_compile_cause last_cause;
static char last_text[512];

static const char *const cause_counter[] = {
    [LT_COMPILE_NONE] = "", [LT_COMPILE_FIRST] = "CompileCauseFirst",
    [LT_COMPILE_SHAPE] = "CompileCauseShape", [LT_COMPILE_DTYPE] = "CompileCauseDtype",
    [LT_COMPILE_STRUCTURE] = "CompileCauseStructure", [LT_COMPILE_SCALAR] = "CompileCauseScalar",
    [LT_COMPILE_OUTPUTS] = "CompileCauseOutputs", [LT_COMPILE_EVICTED] = "CompileCauseEvicted",
};

bool lt_lazy_debug(void)
{
    static int enabled = -1;
    if (enabled < 0) {
        const char *v = getenv("LT_DEBUG");
        enabled = v && *v && strcmp(v, "0") != 0;
    }
    return enabled;
}

int lt_gnode_public_name(const lt_gnode *n, char *buf, size_t cap)
{
    const char *name = n->origin ? n->origin : lt_op_name((lt_op)n->op);
    return snprintf(buf, cap, "%s%s%s", strncmp(name, "lt_", 3) == 0 ? "" : "lt_", name,
                    n->origin_backward ? " (backward)" : "");
}

/* snprintf into a message buffer, where cutting a long text short is fine
 * (no truncation warning: lt_text_put formats through vsnprintf). */
#define say(buf, cap, ...) lt_text_put(&(lt_text){(buf), (cap), 0}, __VA_ARGS__)

/* ---- comparing two nodes at the same position --------------------------- */

/* NULL while the graph has no operand at all (no arithmetic on NULL). */
static const lt_gvalue *inputs_of(const lt_graph *g, const lt_gnode *n)
{
    return g->inputs ? &g->inputs[n->first_input] : NULL;
}

/* Same kind, op, operands (and leaf slot): the same place in the program. */
static bool same_structure(const lt_graph *a, const lt_gnode *x, const lt_graph *b, const lt_gnode *y)
{
    if (x->kind != y->kind || x->op != y->op || x->nin != y->nin || x->nout != y->nout ||
        (x->kind == LT_NODE_DATA && x->slot != y->slot))
        return false;
    const lt_gvalue *u = inputs_of(a, x), *v = inputs_of(b, y);
    for (uint32_t k = 0; k < x->nin; k++)
        if (u[k].node != v[k].node || u[k].out != v[k].out)
            return false;
    return true;
}

static bool same_meta(const lt_meta *a, const lt_meta *b, bool dtype_only)
{
    if (a->dtype != b->dtype || a->weak != b->weak)
        return false;
    if (dtype_only)
        return true;
    return a->ndim == b->ndim && memcmp(a->shape, b->shape, sizeof a->shape[0] * (size_t)a->ndim) == 0;
}

/* Is this float baked (0 or 1, and which) or a parameter, in both alike? */
static bool same_special(bool param_a, double va, bool param_b, double vb)
{
    return param_a == param_b && (param_a || va == vb);
}

static bool same_specials(const lt_gnode *x, const lt_gnode *y)
{
    if (x->kind == LT_NODE_SCALAR)
        return same_special(x->slot >= 0, x->scalar, y->slot >= 0, y->scalar);
    if (x->kind != LT_NODE_OP || x->attrs.nf != y->attrs.nf)
        return true; /* a different count is an attribute difference */
    for (int k = 0; k < x->attrs.nf; k++)
        if (!same_special(x->attr_param[k] >= 0, x->attrs.f[k], y->attr_param[k] >= 0, y->attrs.f[k]))
            return false;
    return true;
}

static bool same_int_attrs(const lt_attrs *a, const lt_attrs *b)
{
    return a->ni == b->ni && a->nf == b->nf && a->dtype == b->dtype && a->flag == b->flag &&
           memcmp(a->i, b->i, sizeof a->i[0] * (size_t)a->ni) == 0;
}

/* What differs between two structurally equal nodes (LT_COMPILE_NONE: nothing). */
static lt_compile_cause node_difference(const lt_gnode *x, const lt_gnode *y)
{
    for (int k = 0; k < x->nout; k++)
        if (!same_meta(&x->out[k], &y->out[k], true))
            return LT_COMPILE_DTYPE;
    for (int k = 0; k < x->nout; k++)
        if (!same_meta(&x->out[k], &y->out[k], false))
            return LT_COMPILE_SHAPE;
    if (!same_specials(x, y))
        return LT_COMPILE_SCALAR;
    if (x->kind == LT_NODE_OP && !same_int_attrs(&x->attrs, &y->attrs))
        return LT_COMPILE_STRUCTURE;
    return LT_COMPILE_NONE;
}

/* ---- comparing two graphs ------------------------------------------------ */

/* How near an old graph is to the new one; lower rank, then lower score,
 * is nearer. */
typedef struct match {
    int rank;          /* 0 same graph, 1 same structure, 2 same nodes, 3 other structure */
    uint32_t score;
    lt_compile_cause cause;
    uint32_t node;     /* the first differing node of the new graph, or UINT32_MAX */
    uint32_t ndiff;    /* same structure: how many nodes differ */
    uint32_t ninputs;  /* ... of them inputs (data leaves) */
} match;

static bool same_roots(const lt_graph *a, const lt_graph *b)
{
    if (a->nroots != b->nroots)
        return false;
    for (uint32_t r = 0; r < a->nroots; r++)
        if (a->roots[r].node != b->roots[r].node || a->roots[r].out != b->roots[r].out)
            return false;
    return true;
}

/* Per node: a hash of what it computes (op, attributes, metas, specials and
 * its operands' hashes), independent of where it sits in the order. */
static uint64_t *node_hashes(const lt_graph *g)
{
    uint64_t *h = malloc(sizeof *h * (g->nnodes + 1));
    for (uint32_t i = 0; h && i < g->nnodes; i++) {
        const lt_gnode *n = &g->nodes[i];
        uint64_t s[2];
        lt_ir_hash_init(s);
        lt_ir_hash_u64(s, ((uint64_t)n->kind << 40) | ((uint64_t)n->op << 8) | n->nout);
        lt_ir_hash_u64(s, n->kind == LT_NODE_DATA ? (uint64_t)n->slot : 0);
        lt_ir_hash_u64(s, n->kind == LT_NODE_SCALAR && n->slot < 0 ? (uint64_t)(n->scalar + 2) : 0);
        for (int k = 0; k < n->nout; k++) {
            lt_ir_hash_u64(s, ((uint64_t)(uint32_t)n->out[k].dtype << 8) | (uint64_t)n->out[k].ndim);
            for (int d = 0; d < n->out[k].ndim; d++)
                lt_ir_hash_u64(s, (uint64_t)n->out[k].shape[d]);
        }
        for (int k = 0; n->kind == LT_NODE_OP && k < n->attrs.ni; k++)
            lt_ir_hash_u64(s, (uint64_t)n->attrs.i[k]);
        for (int k = 0; n->kind == LT_NODE_OP && k < n->attrs.nf; k++) /* parameter, or 0 / 1 baked in */
            lt_ir_hash_u64(s, n->attr_param[k] >= 0 ? 0x5ca1a2ull : (uint64_t)(n->attrs.f[k] + 2));
        const lt_gvalue *in = inputs_of(g, n);
        for (uint32_t k = 0; k < n->nin; k++)
            lt_ir_hash_u64(s, h[in[k].node] ^ in[k].out);
        h[i] = s[0] ^ s[1];
    }
    return h;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The same nodes, maybe in another order (new live outputs reorder the
 * post-order walk)? */
static bool same_node_set(const lt_graph *a, const lt_graph *b)
{
    if (a->nnodes != b->nnodes)
        return false;
    uint64_t *ha = node_hashes(a), *hb = node_hashes(b);
    bool same = ha && hb;
    if (same) {
        qsort(ha, a->nnodes, sizeof *ha, compare_u64);
        qsort(hb, b->nnodes, sizeof *hb, compare_u64);
        same = a->nnodes == 0 || memcmp(ha, hb, sizeof *ha * a->nnodes) == 0;
    }
    free(ha);
    free(hb);
    return same;
}

/* Old graph o against the new graph g, which share the structure. The
 * first differing input (data leaf) is named before any op: a batch of
 * another size also changes ops whose shapes are attributes (the ones of
 * a loss's gradient), and the input is the cause. */
static match compare_same_structure(const lt_graph *o, const lt_graph *g)
{
    match m = {1, 0, LT_COMPILE_NONE, UINT32_MAX, 0, 0};
    bool leaf_named = false;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        lt_compile_cause c = node_difference(&o->nodes[i], &g->nodes[i]);
        if (c == LT_COMPILE_NONE)
            continue;
        bool leaf = g->nodes[i].kind == LT_NODE_DATA;
        m.ninputs += leaf;
        if (m.ndiff++ == 0 || (leaf && !leaf_named)) {
            m.cause = c;
            m.node = i;
            leaf_named = leaf;
        }
    }
    m.score = m.ndiff;
    if (m.ndiff == 0) {
        bool roots = same_roots(o, g);
        m.rank = roots ? 0 : 1;
        m.cause = roots ? LT_COMPILE_EVICTED : LT_COMPILE_OUTPUTS;
    }
    return m;
}

static match compare_graphs(const lt_graph *o, const lt_graph *g)
{
    uint32_t n = o->nnodes < g->nnodes ? o->nnodes : g->nnodes, prefix = 0;
    while (prefix < n && same_structure(o, &o->nodes[prefix], g, &g->nodes[prefix]))
        prefix++;
    if (prefix == g->nnodes && prefix == o->nnodes)
        return compare_same_structure(o, g);
    if (same_node_set(o, g))
        return (match){2, 0, LT_COMPILE_OUTPUTS, UINT32_MAX, 0, 0};
    return (match){3, UINT32_MAX - prefix, LT_COMPILE_STRUCTURE, prefix, 0, 0};
}

static bool nearer(const match *a, const match *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->score < b->score);
}

/* ---- describing the difference ------------------------------------------- */

static uint32_t first_reader(const lt_graph *g, uint32_t node)
{
    for (uint32_t i = node + 1; i < g->nnodes; i++) {
        const lt_gvalue *in = inputs_of(g, &g->nodes[i]);
        for (uint32_t k = 0; k < g->nodes[i].nin; k++)
            if (in[k].node == node)
                return i;
    }
    return UINT32_MAX;
}

/* "node 7 (mul, recorded by lt_mul)"; leaves and scalars are named
 * by their first reader. */
static void describe_node(const lt_graph *g, uint32_t i, char *buf, size_t cap)
{
    const lt_gnode *n = &g->nodes[i];
    uint32_t reader = n->kind == LT_NODE_OP ? i : first_reader(g, i);
    char who[96] = "no op";
    if (reader < g->nnodes)
        lt_gnode_public_name(&g->nodes[reader], who, sizeof who);
    if (n->kind == LT_NODE_DATA)
        say(buf, cap, "input %d of the graph (node %u, read by %s)", n->slot, i, who);
    else if (n->kind == LT_NODE_SCALAR)
        say(buf, cap, "the scalar at node %u (read by %s)", i, who);
    else
        say(buf, cap, "node %u (%s, recorded by %s)", i, lt_op_name((lt_op)n->op), who);
}

static void meta_text(const lt_meta *m, bool dtype_only, char *buf, size_t cap)
{
    char shape[160];
    if (dtype_only)
        say(buf, cap, "%s", lt_dtype_name((lt_dtype)m->dtype));
    else
        say(buf, cap, "%s%s", lt_dtype_name((lt_dtype)m->dtype),
            lt_shape_str(m->shape, m->ndim, shape, sizeof shape));
}

static void special_text(bool param, double v, char *buf, size_t cap)
{
    if (param)
        say(buf, cap, "%g (a runtime parameter)", v);
    else
        say(buf, cap, "%g (compiled into the program)", v);
}

/* A scalar operand or attribute whose specialness changed. */
static void describe_scalar(const lt_gnode *o, const lt_gnode *n, const char *where, char *buf, size_t cap)
{
    char was[64] = "", now[64] = "";
    if (n->kind == LT_NODE_SCALAR) {
        special_text(o->slot >= 0, o->scalar, was, sizeof was);
        special_text(n->slot >= 0, n->scalar, now, sizeof now);
    }
    for (int k = 0; n->kind == LT_NODE_OP && k < n->attrs.nf && !now[0]; k++)
        if (!same_special(o->attr_param[k] >= 0, o->attrs.f[k], n->attr_param[k] >= 0, n->attrs.f[k])) {
            special_text(o->attr_param[k] >= 0, o->attrs.f[k], was, sizeof was);
            special_text(n->attr_param[k] >= 0, n->attrs.f[k], now, sizeof now);
        }
    say(buf, cap,
             "a scalar became special: %s is now %s, was %s in the cached graph (0 and 1 are compiled "
             "in, other values are parameters)",
             where, now, was);
}

static void describe_meta(const match *m, const lt_gnode *o, const lt_gnode *n, const char *where, char *buf,
                          size_t cap)
{
    lt_compile_cause c = m->cause;
    bool dtype = c == LT_COMPILE_DTYPE;
    int k = 0;
    while (k < n->nout - 1 && same_meta(&o->out[k], &n->out[k], dtype))
        k++;
    char was[192], now[192], more[64] = "";
    meta_text(&o->out[k], dtype, was, sizeof was);
    meta_text(&n->out[k], dtype, now, sizeof now);
    if (m->ndiff > 1)
        say(more, sizeof more, "; %u nodes differ in all, %u of them inputs", m->ndiff, m->ninputs);
    say(buf, cap, "new %s: %s %s %s, the cached graph's was %s%s", dtype ? "dtype" : "shape", where,
             n->kind == LT_NODE_OP ? "gives" : "is", now, was, more);
}

static void describe_structure(const lt_graph *o, const lt_graph *g, uint32_t i, char *buf, size_t cap)
{
    char now[192], was[192];
    if (i >= g->nnodes) {
        describe_node(o, i, was, sizeof was);
        say(buf, cap, "different ops: the graph ends after %u nodes, the cached graph goes on with %s",
                 g->nnodes, was);
        return;
    }
    describe_node(g, i, now, sizeof now);
    if (i >= o->nnodes) {
        say(buf, cap, "different ops: %s is new; the cached graph ends after %u nodes", now, o->nnodes);
        return;
    }
    describe_node(o, i, was, sizeof was);
    const lt_gnode *x = &o->nodes[i], *y = &g->nodes[i];
    const char *what = x->kind != y->kind || x->op != y->op ? "another op"
                       : x->kind == LT_NODE_DATA        ? "another input"
                                                        : "other operands";
    say(buf, cap, "different ops: at %s, the cached graph has %s (first difference: %s)", now, was, what);
}

/* Which tensor the new graph computes that the old one does not, or the
 * other way round (both graphs hold the same nodes). */
static void describe_outputs(const lt_graph *o, const lt_graph *g, char *buf, size_t cap)
{
    char node[192] = "";
    uint64_t *ho = node_hashes(o), *hg = node_hashes(g);
    for (int pass = 0; ho && hg && pass < 2 && !node[0]; pass++) {
        const lt_graph *a = pass ? o : g, *b = pass ? g : o;
        const uint64_t *ha = pass ? ho : hg, *hb = pass ? hg : ho;
        for (uint32_t r = 0; r < a->nroots && !node[0]; r++) {
            bool found = false;
            for (uint32_t s = 0; s < b->nroots && !found; s++)
                found = ha[a->roots[r].node] == hb[b->roots[s].node] && a->roots[r].out == b->roots[s].out;
            if (!found) {
                char what[160];
                describe_node(a, a->roots[r].node, what, sizeof what);
                say(node, sizeof node, ": %s %s", what, pass ? "is no longer one" : "is a new one");
            }
        }
    }
    free(ho);
    free(hg);
    say(buf, cap, "different live outputs: %u now, %u in the cached graph%s", g->nroots, o->nroots, node);
}

static void describe(const match *m, const seen_graph *s, const lt_graph *g, const lt_backend *be, char *buf,
                     size_t cap)
{
    const lt_graph *o = s->g;
    char where[192];
    switch (m->cause) {
    case LT_COMPILE_SHAPE: case LT_COMPILE_DTYPE:
        describe_node(g, m->node, where, sizeof where);
        describe_meta(m, &o->nodes[m->node], &g->nodes[m->node], where, buf, cap);
        break;
    case LT_COMPILE_SCALAR:
        describe_node(g, m->node, where, sizeof where);
        describe_scalar(&o->nodes[m->node], &g->nodes[m->node], where, buf, cap);
        break;
    case LT_COMPILE_STRUCTURE:
        if (m->rank == 1) { /* same operands, other attributes */
            describe_node(g, m->node, where, sizeof where);
            say(buf, cap, "different ops: %s has other attributes than in the cached graph", where);
        } else {
            describe_structure(o, g, m->node, buf, cap);
        }
        break;
    case LT_COMPILE_OUTPUTS:
        describe_outputs(o, g, buf, cap);
        break;
    default:
        if (s->backend != be)
            say(buf, cap, "the same graph was compiled before for backend %s, not for %s", s->backend->name,
                     be->name);
        else
            say(buf, cap, "the same graph was compiled before and dropped from the program cache "
                               "(LT_CACHE_SIZE, lt_lazy_set_cache_size)");
        break;
    }
}

/* The cause of compiling g, against the nearest graph of the history. */
static lt_compile_cause explain(const lt_graph *g, const lt_backend *be, char *buf, size_t cap)
{
    const seen_graph *best = NULL;
    match bm = {4, 0, LT_COMPILE_FIRST, UINT32_MAX, 0, 0};
    for (unsigned k = 1; k <= HISTORY; k++) { /* most recent first: it wins ties */
        const seen_graph *s = &history[(history_next + HISTORY - k) % HISTORY];
        if (!s->g)
            continue;
        match m = compare_graphs(s->g, g);
        if (!best || nearer(&m, &bm)) {
            best = s;
            bm = m;
        }
    }
    if (!best) {
        say(buf, cap, "the first graph compiled: nothing to compare with");
        return LT_COMPILE_FIRST;
    }
    describe(&bm, best, g, be, buf, cap);
    return bm.cause;
}

static void forget(seen_graph *s)
{
    if (s->g)
        history_nodes -= s->g->nnodes;
    lt_graph_free(s->g);
    s->g = NULL;
}

/* Keeps a copy of g in the ring in place of the oldest graph, dropping
 * more of the oldest while the ring would hold over HISTORY_NODES nodes. */
static void remember(const lt_graph *g, const uint64_t key[2], const lt_backend *be)
{
    for (unsigned k = 0; k < HISTORY && (k == 0 || history_nodes + g->nnodes > HISTORY_NODES); k++)
        forget(&history[(history_next + k) % HISTORY]);
    seen_graph *s = &history[history_next];
    s->g = lt_graph_copy(g); /* NULL when out of memory: just not remembered */
    history_nodes += s->g ? s->g->nnodes : 0;
    memcpy(s->key, key, sizeof s->key);
    s->backend = be;
    history_next = (history_next + 1) % HISTORY;
}

/* ---- run-time failures ------------------------------------------------------- */

void lt_explain_failure(lt_status status, const lt_gnode *n, const char *error, bool step, const char *why)
{
    char forced[160];
    say(forced, sizeof forced, "while running the lazy %s forced by %s%s", step ? "step" : "graph",
        strncmp(why, "lt_", 3) == 0 ? "" : "lt_", why);
    if (!n || !n->origin) {
        lt_error(status, "%s (%s)", error, forced);
        return;
    }
    char who[96];
    lt_gnode_public_name(n, who, sizeof who);
    const char *op = lt_op_name((lt_op)n->op);
    size_t len = strlen(op);
    bool op_named = strncmp(error, op, len) == 0 && error[len] == ':'; /* "gather: index 5 ..." */
    lt_error(status, "%s: failed when run (lowered to %s%s%s) (%s)", who, op_named ? "" : op, op_named ? "" : ": ",
             error, forced);
}

/* ---- hooks and the public API --------------------------------------------- */

static void set_last(lt_compile_cause cause, const char *text)
{
    pthread_mutex_lock(&last_lock);
    last_cause = cause;
    snprintf(last_text, sizeof last_text, "%s", text);
    pthread_mutex_unlock(&last_lock);
}

void lt_explain_compiled(const lt_graph *g, const uint64_t key[2], const lt_backend *be)
{
    char text[512];
    lt_compile_cause cause = explain(g, be, text, sizeof text);
    lt_metric_add(cause_counter[cause], 1);
    if (lt_metrics_counter("Steps") >= WARMUP_STEPS)
        lt_metric_add("CompilesAfterWarmup", 1);
    set_last(cause, text);
    if (lt_lazy_debug())
        fprintf(stderr, "lazytensor:   compiled because: %s\n", text);
    remember(g, key, be);
}

void lt_explain_cache_hit(void) { set_last(LT_COMPILE_NONE, ""); }

void lt_explain_step_done(void) { lt_metric_add("Steps", 1); }

int lt_explain_warmup_steps(void) { return WARMUP_STEPS; }

int lt_lazy_last_compile_cause(char *buf, size_t cap)
{
    if (!buf && cap > 0) {
        lt_error(LT_ERR_NULL, "lazy_last_compile_cause: buf is NULL with cap %zu", cap);
        return -1;
    }
    pthread_mutex_lock(&last_lock);
    int n = snprintf(buf, cap, "%s", last_text);
    pthread_mutex_unlock(&last_lock);
    return n;
}

lt_compile_cause lt_lazy_last_compile_kind(void)
{
    pthread_mutex_lock(&last_lock);
    lt_compile_cause c = last_cause;
    pthread_mutex_unlock(&last_lock);
    return c;
}
