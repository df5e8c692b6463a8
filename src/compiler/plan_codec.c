/*
 * plan_codec.c - the bytes of a plan-cache entry (plan_cache.c): what a
 * compiled program needs besides its object to run (buffer table,
 * workspace size, root buffers, eager calls), with the canonical graph it
 * was built for.
 *
 * Decoding treats every byte as hostile: each read is bounds-checked, each
 * count is bounded by the graph before anything is allocated, and every
 * index, size and strided view is checked against the graph the caller
 * is compiling (which must be byte for byte the one stored, so a hash
 * collision cannot pass) before the plan is returned. The functions do no
 * I/O, so they can be fuzzed directly.
 *
 * Entry layout (little-endian host order; the key includes the library's
 * build, so an entry is never read by another build):
 *   header  magic "LTPLAN02", body length, 128-bit checksum (of the two
 *           keys and the body), 128-bit entry key, 128-bit key of the
 *           program's object
 *   body    the graph's canonical bytes (length first), the counters of
 *           the compile (kir_plan_info), workspace size, buffers (value,
 *           kind with a flag for a buffer a fused gemm update left unused,
 *           slot, donor, workspace offset), root buffers, calls (node, then
 *           per input its buffer, strides and offset, then the fused
 *           update's start buffer (-1 for a plain call), alpha slot, alpha
 *           bits and sign flag, then its output buffers)
 */
#include "compiler/plan_cache.h"
#include "compiler/cc_internal.h"
#include "lazy/lazy.h"

#include <stdlib.h>
#include <string.h>

#define PLAN_MAGIC "LTPLAN02"
#define HEADER_BYTES (8 + 8 + 16 + 16 + 16)
/* In a buffer's kind word: the buffer is unused (0 bytes): the product a
 * fused gemm update no longer writes. */
#define UNUSED_BIT 40

/* ---- writing ---------------------------------------------------------------------------------------- */

typedef struct sink {
    unsigned char *p;
    size_t n, cap;
    bool ok;
} sink;

static void put(sink *s, const void *data, size_t n)
{
    if (!s->ok)
        return;
    if (s->n + n > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->n + n)
            cap *= 2;
        unsigned char *p = realloc(s->p, cap);
        if (!p) {
            s->ok = false;
            return;
        }
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->n, data, n);
    s->n += n;
}

static void put_u64(sink *s, uint64_t v) { put(s, &v, sizeof v); }
static void put_i64(sink *s, int64_t v) { put(s, &v, sizeof v); }

static void put_meta(sink *s, const lt_meta *m)
{
    put_u64(s, (uint64_t)(uint32_t)m->dtype | (uint64_t)(uint32_t)m->ndim << 32);
    put_u64(s, (uint64_t)(uint32_t)m->weak);
    for (int d = 0; d < m->ndim && d < LT_MAX_DIMS; d++)
        put_i64(s, m->shape[d]);
}

static uint64_t bits_of(double v)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* Everything of a node the compiled program depends on: what the graph key
 * hashes, with runtime scalars written as "a parameter" (their values
 * change between runs of one program). */
static void put_node(sink *s, const lt_gnode *n)
{
    put_u64(s, (uint64_t)n->kind | (uint64_t)n->nout << 8 | (uint64_t)n->op << 16 | (uint64_t)n->nin << 32);
    put_u64(s, n->first_input);
    for (int o = 0; o < n->nout && o < LT_MAX_OUTPUTS; o++)
        put_meta(s, &n->out[o]);
    const lt_attrs *a = &n->attrs;
    put_u64(s, (uint64_t)(uint32_t)a->ni | (uint64_t)(uint32_t)a->nf << 32);
    put_u64(s, (uint64_t)(uint32_t)a->dtype | (uint64_t)(uint32_t)a->flag << 32);
    for (int i = 0; i < a->ni && i < LT_ATTR_INTS; i++)
        put_i64(s, a->i[i]);
    for (int i = 0; i < a->nf && i < LT_ATTR_FLOATS; i++) {
        put_i64(s, n->attr_param[i]);
        put_u64(s, n->attr_param[i] >= 0 ? 0 : bits_of(a->f[i]));
    }
    put_i64(s, n->slot);
    put_u64(s, n->kind == LT_NODE_SCALAR && n->slot < 0 ? bits_of(n->scalar) : 0);
}

void kir_graph_bytes_free(kir_bytes *b) { free(b->p); b->p = NULL; b->n = 0; }

bool kir_graph_bytes(const lt_graph *g, kir_bytes *out)
{
    sink s = {.ok = true};
    put_u64(&s, g->nnodes);
    put_u64(&s, g->ninputs);
    put_u64(&s, g->nroots);
    put_u64(&s, (uint64_t)g->nleaves | (uint64_t)g->nscalars << 32);
    for (uint32_t i = 0; i < g->nnodes; i++)
        put_node(&s, &g->nodes[i]);
    for (uint32_t i = 0; i < g->ninputs; i++)
        put_u64(&s, (uint64_t)g->inputs[i].node | (uint64_t)g->inputs[i].out << 32);
    for (uint32_t i = 0; i < g->nroots; i++)
        put_u64(&s, (uint64_t)g->roots[i].node | (uint64_t)g->roots[i].out << 32);
    if (!s.ok) {
        free(s.p);
        return false;
    }
    out->p = s.p;
    out->n = s.n;
    return true;
}

static void put_plan(sink *s, const kir_plan *p, const kir_plan_info *info)
{
    const int64_t counts[] = {info->kernels, info->functions,  info->calls,     info->fused_gemm,
                              info->bytes,   info->units,      info->cold_units, info->warm_units};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        put_i64(s, counts[i]);
    put_i64(s, p->ws_size);
    put_i64(s, p->nb);
    for (int b = 0; b < p->nb; b++) {
        const kir_buf *buf = &p->b[b];
        bool unused = buf->kind == KB_TMP && buf->def < 0 && buf->nbytes == 0; /* fuse_gemm.c */
        put_u64(s, (uint64_t)buf->value | (uint64_t)(uint32_t)buf->kind << 32 | (uint64_t)unused << UNUSED_BIT);
        put_i64(s, buf->slot);
        put_i64(s, buf->donor);
        put_i64(s, buf->offset);
    }
    for (uint32_t r = 0; r < p->g->nroots; r++)
        put_i64(s, p->root_buf[r]);
    put_i64(s, p->ncalls);
    for (int c = 0; c < p->ncalls; c++) {
        const kir_call *call = &p->calls[c];
        put_u64(s, call->node);
        for (int k = 0; k < call->nin; k++) {
            const kir_arg *a = &call->in[k];
            put_i64(s, a->scalar ? -1 : a->buf);
            if (a->scalar)
                continue;
            for (int d = 0; d < a->meta.ndim; d++)
                put_i64(s, a->strides[d]);
            put_i64(s, a->offset);
        }
        put_i64(s, call->acc_buf);
        put_i64(s, call->alpha_slot);
        put_u64(s, bits_of(call->alpha));
        put_i64(s, call->alpha_negated);
        for (int o = 0; o < call->nout; o++)
            put_i64(s, call->out[o]);
    }
}

static void checksum(const uint64_t key[2], const uint64_t object[2], const unsigned char *body, size_t n,
                     uint64_t sum[2])
{
    lt_ir_hash_init(sum);
    cc_hash_bytes(sum, key, 2 * sizeof *key);
    cc_hash_bytes(sum, object, 2 * sizeof *object);
    cc_hash_bytes(sum, body, n);
}

unsigned char *kir_plan_encode(const kir_plan *p, const kir_plan_info *info, const kir_bytes *graph,
                               const uint64_t key[2], const uint64_t object[2], size_t *len)
{
    sink body = {.ok = true};
    put_u64(&body, graph->n);
    put(&body, graph->p, graph->n);
    put_plan(&body, p, info);
    sink all = {.ok = body.ok};
    uint64_t sum[2];
    if (body.ok)
        checksum(key, object, body.p, body.n, sum);
    put(&all, PLAN_MAGIC, 8);
    put_u64(&all, body.n);
    put(&all, sum, sizeof sum);
    put(&all, key, 2 * sizeof *key);
    put(&all, object, 2 * sizeof *object);
    put(&all, body.p, body.n);
    free(body.p);
    if (!all.ok) {
        free(all.p);
        return NULL;
    }
    *len = all.n;
    return all.p;
}

/* ---- reading ---------------------------------------------------------------------------------------- */

typedef struct source {
    const unsigned char *p;
    size_t n, at;
    bool ok;
} source;

static void get(source *s, void *out, size_t n)
{
    if (!s->ok || n > s->n - s->at) { /* s->at <= s->n always */
        s->ok = false;
        memset(out, 0, n);
        return;
    }
    memcpy(out, s->p + s->at, n);
    s->at += n;
}

static uint64_t get_u64(source *s)
{
    uint64_t v;
    get(s, &v, sizeof v);
    return v;
}

static int64_t get_i64(source *s)
{
    int64_t v;
    get(s, &v, sizeof v);
    return v;
}

/* An index in [lo, hi), else the source fails. */
static int64_t get_index(source *s, int64_t lo, int64_t hi)
{
    int64_t v = get_i64(s);
    if (v < lo || v >= hi)
        s->ok = false;
    return s->ok ? v : lo;
}

static const lt_meta *value_meta(const lt_graph *g, uint32_t value)
{
    uint32_t node = value / LT_MAX_OUTPUTS, out = value % LT_MAX_OUTPUTS;
    if (node >= g->nnodes || out >= g->nodes[node].nout)
        return NULL;
    return &g->nodes[node].out[out];
}

/* Bytes of a value of meta m, or -1 when m is not a valid shape. */
static int64_t meta_bytes(const lt_meta *m)
{
    int64_t numel;
    size_t size = lt_dtype_size((lt_dtype)m->dtype);
    if (size == 0 || m->ndim < 0 || m->ndim > LT_MAX_DIMS || !lt_shape_numel_checked(m->shape, m->ndim, &numel) ||
        numel > LT_MAX_SPAN_BYTES / (int64_t)size)
        return -1;
    return numel * (int64_t)size;
}

static bool get_info(source *s, kir_plan_info *info)
{
    int64_t *fields[] = {&info->kernels, &info->functions,  &info->calls,      &info->fused_gemm,
                         &info->bytes,   &info->units,      &info->cold_units, &info->warm_units};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        *fields[i] = get_i64(s);
        if (*fields[i] < 0 || *fields[i] > INT32_MAX)
            s->ok = false;
    }
    return s->ok && info->units >= 1 && info->units <= LT_CC_MAX_UNITS;
}

/* The DATA node of each leaf slot (UINT32_MAX: none). */
static uint32_t *leaf_nodes(const lt_graph *g)
{
    uint32_t *node_of = malloc(sizeof *node_of * ((size_t)g->nleaves + 1));
    if (!node_of)
        return NULL;
    for (uint32_t slot = 0; slot < g->nleaves; slot++)
        node_of[slot] = UINT32_MAX;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const lt_gnode *n = &g->nodes[i];
        if (n->kind == LT_NODE_DATA && n->slot >= 0 && (uint32_t)n->slot < g->nleaves)
            node_of[n->slot] = i;
    }
    return node_of;
}

/* One buffer: its value must exist in g, a leaf must be that slot's DATA
 * node, a donor a leaf of the same size, a temporary inside the
 * workspace. */
static bool get_buffer(source *s, const lt_graph *g, const uint32_t *leaf_node, int64_t ws, kir_buf *b)
{
    uint64_t word = get_u64(s);
    b->value = (uint32_t)word;
    b->kind = (int)((word >> 32) & 0xff);
    bool unused = (word >> UNUSED_BIT) & 1;
    if (word >> (UNUSED_BIT + 1) || (word >> 32 & 0xff00 & ~0x100u))
        s->ok = false;
    b->slot = (int32_t)get_index(s, -1, INT32_MAX);
    b->donor = (int32_t)get_index(s, -1, (int64_t)g->nleaves);
    b->offset = get_i64(s);
    b->def = b->last = -1;
    const lt_meta *m = value_meta(g, b->value);
    int64_t bytes = m ? meta_bytes(m) : -1;
    if (!s->ok || bytes < 0)
        return false;
    b->meta = *m;
    b->nbytes = (size_t)bytes;
    if (unused) {
        b->nbytes = 0;
        return b->kind == KB_TMP && b->donor == -1 && b->offset == 0;
    }
    switch (b->kind) {
    case KB_LEAF:
        return b->slot >= 0 && (uint32_t)b->slot < g->nleaves && leaf_node[b->slot] == b->value / LT_MAX_OUTPUTS &&
               b->donor == -1;
    case KB_OUT:
        if (b->donor < 0)
            return true;
        return leaf_node[b->donor] != UINT32_MAX &&
               meta_bytes(&g->nodes[leaf_node[b->donor]].out[0]) == bytes;
    case KB_TMP:
        return b->donor == -1 && b->offset >= 0 && b->offset <= ws && bytes <= ws - b->offset;
    default:
        return false;
    }
}

/* A call input: a scalar node (rebuilt from the graph), or a strided view
 * whose every element lies inside its buffer. */
static bool get_arg(source *s, const kir_plan *p, const lt_gnode *n, uint32_t k, kir_arg *a)
{
    const lt_graph *g = p->g;
    lt_gvalue in = g->inputs[n->first_input + k];
    const lt_meta *m = value_meta(g, KIR_VALUE(in.node, in.out));
    if (!m || meta_bytes(m) < 0)
        return false;
    a->meta = *m;
    a->buf = (int32_t)get_index(s, -1, p->nb);
    const lt_gnode *src = &g->nodes[in.node];
    if (src->kind == LT_NODE_SCALAR) {
        a->scalar = true;
        a->slot = src->slot;
        a->value = src->scalar;
        return s->ok && a->buf == -1 && (src->slot < 0 || (uint32_t)src->slot < g->nscalars);
    }
    if (a->buf < 0)
        return false;
    int64_t lo = 0, hi = 0, numel = 1;
    for (int d = 0; d < m->ndim; d++) {
        a->strides[d] = get_index(s, -LT_MAX_SPAN_BYTES, LT_MAX_SPAN_BYTES);
        numel = m->shape[d] == 0 ? 0 : numel;
        if (m->shape[d] > 1 && (a->strides[d] > LT_MAX_SPAN_BYTES / m->shape[d] ||
                                a->strides[d] < -LT_MAX_SPAN_BYTES / m->shape[d]))
            return false;
        /* |reach| < 2^59 per dim, so the sums below cannot overflow */
        int64_t reach = a->strides[d] * (m->shape[d] > 0 ? m->shape[d] - 1 : 0);
        if (reach < 0)
            lo += reach;
        else
            hi += reach;
    }
    a->offset = get_index(s, 0, LT_MAX_SPAN_BYTES);
    const kir_buf *b = &p->b[a->buf];
    int64_t elems = (int64_t)(b->nbytes / lt_dtype_size((lt_dtype)m->dtype));
    return s->ok && (numel == 0 || (a->offset + lo >= 0 && a->offset + hi < elems)) &&
           lt_dtype_size((lt_dtype)b->meta.dtype) == lt_dtype_size((lt_dtype)m->dtype);
}

/* A fused gemm update (fuse_gemm.c): a 2-D matmul of two buffers writing
 * an output of the product's shape and dtype, starting from a buffer of the
 * same size that neither operand lives in. */
static bool fused_update_fits(const kir_plan *p, const lt_gnode *n, const kir_call *c)
{
    const kir_buf *out = &p->b[c->out[0]], *acc = &p->b[c->acc_buf];
    const lt_meta *m = &n->out[0];
    lt_dtype dt = (lt_dtype)m->dtype;
    if (n->op != LT_OP_MATMUL || c->nin != 2 || c->nout != 1 || (dt != LT_F32 && dt != LT_F64) || m->ndim != 2 ||
        out->meta.dtype != m->dtype || out->meta.ndim != 2 || memcmp(out->meta.shape, m->shape, 2 * sizeof(int64_t)) ||
        acc->meta.dtype != m->dtype || acc->nbytes != out->nbytes || c->out[0] == c->acc_buf)
        return false;
    for (int a = 0; a < 2; a++)
        if (c->in[a].scalar || c->in[a].meta.ndim != 2 || c->in[a].buf == c->acc_buf || c->in[a].buf == c->out[0])
            return false;
    return c->alpha == c->alpha; /* not NaN */
}

/* One eager call: an op node of g, its inputs and its outputs' buffers
 * (each of the node's own output shape, or, fused with its update, the
 * update's output). */
static bool get_call(source *s, kir_plan *p, kir_call *c)
{
    const lt_graph *g = p->g;
    c->node = (uint32_t)get_index(s, 0, (int64_t)g->nnodes);
    const lt_gnode *n = &g->nodes[c->node];
    if (!s->ok || n->kind != LT_NODE_OP || n->nout > LT_MAX_OUTPUTS)
        return false;
    c->in = calloc((size_t)n->nin + 1, sizeof *c->in);
    if (!c->in)
        return false;
    c->nin = (int)n->nin;
    for (uint32_t k = 0; k < n->nin; k++)
        if (!get_arg(s, p, n, k, &c->in[k]))
            return false;
    c->acc_buf = (int32_t)get_index(s, -1, p->nb);
    c->alpha_slot = (int32_t)get_index(s, -1, (int64_t)g->nscalars);
    uint64_t alpha_bits = get_u64(s);
    memcpy(&c->alpha, &alpha_bits, sizeof c->alpha);
    c->alpha_negated = get_index(s, 0, 2) == 1;
    c->nout = n->nout;
    for (int o = 0; o < c->nout; o++) {
        c->out[o] = (int32_t)get_index(s, 0, p->nb);
        bool own_value = p->b[c->out[o]].value == KIR_VALUE(c->node, o);
        if (!s->ok || (!own_value && c->acc_buf < 0) || p->b[c->out[o]].kind == KB_LEAF)
            return false;
    }
    return c->acc_buf < 0 || fused_update_fits(p, n, c);
}

/* Counts are ints in a plan. */
static int64_t bounded(int64_t n) { return n < INT32_MAX ? n : INT32_MAX; }

static bool get_plan(source *s, kir_plan *p, kir_plan_info *info)
{
    const lt_graph *g = p->g;
    if (!get_info(s, info))
        return false;
    p->ws_size = get_index(s, 0, LT_MAX_SPAN_BYTES);
    /* a buffer per value at most (and an int) */
    p->nb = (int)get_index(s, 0, bounded((int64_t)g->nnodes * LT_MAX_OUTPUTS + 1));
    p->b = calloc((size_t)p->nb + 1, sizeof *p->b);
    p->root_buf = calloc((size_t)g->nroots + 1, sizeof *p->root_buf);
    uint32_t *leaf_node = leaf_nodes(g);
    bool ok = s->ok && p->b && p->root_buf && leaf_node;
    for (int b = 0; ok && b < p->nb; b++)
        ok = get_buffer(s, g, leaf_node, p->ws_size, &p->b[b]);
    free(leaf_node);
    /* a root's buffer holds its value: its own, or (a reshape of a leaf)
     * the leaf's of the same size */
    for (uint32_t r = 0; ok && r < g->nroots; r++) {
        p->root_buf[r] = (int32_t)get_index(s, 0, p->nb);
        const kir_buf *b = &p->b[p->root_buf[r]];
        const lt_meta *m = value_meta(g, KIR_VALUE(g->roots[r].node, g->roots[r].out));
        ok = s->ok && m && b->kind != KB_TMP && meta_bytes(m) == (int64_t)b->nbytes;
    }
    if (!ok)
        return false;
    int64_t ncalls = get_index(s, 0, bounded((int64_t)g->nnodes + 1));
    p->calls = calloc((size_t)ncalls + 1, sizeof *p->calls);
    if (!s->ok || !p->calls)
        return false;
    for (p->ncalls = 0; p->ncalls < ncalls; p->ncalls++)
        if (!get_call(s, p, &p->calls[p->ncalls])) {
            p->ncalls++; /* freed with the plan */
            return false;
        }
    return s->at == s->n; /* nothing left over */
}

/* Frees what decode_borrowed allocated (not the graph, which is the caller's). */
static void release_borrowed(kir_plan *p)
{
    for (int c = 0; p->calls && c < p->ncalls; c++)
        free(p->calls[c].in);
    free(p->calls);
    free(p->b);
    free(p->root_buf);
    memset(p, 0, sizeof *p);
}

/* kir_plan_decode, with p->g pointing at the caller's g (read only). */
static bool decode_borrowed(const unsigned char *bytes, size_t len, const lt_graph *g, const kir_bytes *graph,
                            const uint64_t key[2], kir_plan *p, kir_plan_info *info, uint64_t object[2])
{
    memset(p, 0, sizeof *p);
    if (!bytes || !g || !graph || len < HEADER_BYTES || memcmp(bytes, PLAN_MAGIC, 8) != 0)
        return false;
    uint64_t body_len, sum[2], stored_key[2];
    memcpy(&body_len, bytes + 8, 8);
    memcpy(sum, bytes + 16, 16);
    memcpy(stored_key, bytes + 32, 16);
    memcpy(object, bytes + 48, 16);
    if (body_len != len - HEADER_BYTES || stored_key[0] != key[0] || stored_key[1] != key[1])
        return false;
    uint64_t check[2];
    checksum(stored_key, object, bytes + HEADER_BYTES, (size_t)body_len, check);
    if (check[0] != sum[0] || check[1] != sum[1])
        return false;
    source s = {bytes + HEADER_BYTES, (size_t)body_len, 0, true};
    uint64_t glen = get_u64(&s);
    if (!s.ok || glen != graph->n || graph->n > s.n - s.at || memcmp(s.p + s.at, graph->p, graph->n) != 0)
        return false; /* another graph: a collision of keys, or damage */
    s.at += graph->n;
    p->g = (lt_graph *)g; /* only read while decoding */
    if (get_plan(&s, p, info))
        return true;
    release_borrowed(p);
    return false;
}

bool kir_plan_decode(const unsigned char *bytes, size_t len, const lt_graph *g, const kir_bytes *graph,
                     const uint64_t key[2], kir_plan *p, kir_plan_info *info, uint64_t object[2])
{
    if (!decode_borrowed(bytes, len, g, graph, key, p, info, object))
        return false;
    lt_graph *own = lt_graph_copy(g);
    if (!own) {
        release_borrowed(p);
        return false;
    }
    p->g = own;
    return true;
}

bool kir_plan_check(const unsigned char *bytes, size_t len, const lt_graph *g, const kir_bytes *graph,
                    const uint64_t key[2])
{
    kir_plan p;
    kir_plan_info info;
    uint64_t object[2];
    bool ok = decode_borrowed(bytes, len, g, graph, key, &p, &info, object);
    if (ok)
        release_borrowed(&p);
    return ok;
}
