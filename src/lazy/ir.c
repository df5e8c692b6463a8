/*
 * ir.c - the IR graph arena.
 *
 * Nodes live in one growable array and are addressed by 32-bit indices;
 * their output metadata and non-default attributes in two more (see
 * lt_node), so recording an op costs a few appends and two hash mixes,
 * with no per-node malloc once the arena has grown. Every scalar node
 * shares meta 0 (0-d f64, weak), which resets keep. Each node's structural hash is computed here, in the
 * constructor: the local hash covers kind, op, attributes and output
 * metadata; the full hash adds the operands' hashes. A device-data leaf
 * hashes only its dtype and shape, never its identity or contents, and a
 * scalar hashes its value only when it is 0 or 1.
 */
#include "lazy/lazy.h"

#include <stdlib.h>
#include <string.h>

/* The origin given to ops recorded on this thread (see lazy.h). */
static _Thread_local lt_origin current_origin;

static lt_node *nodes;
static uint32_t node_count, node_cap;
static lt_value *inputs;
static uint32_t input_count, input_cap;
/* metas[0] is every scalar node's output (set once, kept by resets) */
static lt_meta *metas;
static uint32_t meta_count = 1, meta_cap;
static lt_attrs *attrs_list;
static uint32_t attrs_count, attrs_cap;
static uint64_t generation = 1;

static const lt_attrs default_attrs = {.dtype = -1};
static const lt_meta scalar_meta = {.dtype = LT_F64, .weak = 1};

uint64_t lt_ir_generation(void) { return generation; }
const lt_node *lt_ir_node(uint32_t index) { return &nodes[index]; }
/* NULL while no node has inputs (no arithmetic on a NULL array). */
const lt_value *lt_ir_inputs(const lt_node *n) { return inputs ? &inputs[n->first_input] : NULL; }
const lt_meta *lt_ir_out(const lt_node *n, int k) { return &metas[n->first_meta + (uint32_t)k]; }
const lt_attrs *lt_ir_attrs(const lt_node *n)
{
    return n->attrs_index == LT_IR_DEFAULT_ATTRS ? &default_attrs : &attrs_list[n->attrs_index];
}
uint32_t lt_ir_node_count(void) { return node_count; }

/* ---- hashing: two independent 64-bit mixes make a 128-bit hash ---------- */

static uint64_t mix64(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

static void hash_u64(uint64_t h[2], uint64_t v)
{
    h[0] = mix64(h[0], v);
    h[1] = mix64(h[1] ^ 0x94d049bb133111ebull, v * 0xff51afd7ed558ccdull + 1);
}

static void hash_meta(uint64_t h[2], const lt_meta *m)
{
    hash_u64(h, (uint64_t)m->dtype | ((uint64_t)m->ndim << 8) | ((uint64_t)m->weak << 16));
    for (int d = 0; d < m->ndim; d++)
        hash_u64(h, (uint64_t)m->shape[d]);
}

static uint64_t double_bits(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

/* Scalars other than 0 and 1 hash as "a parameter" so that changing them
 * never changes the graph key. */
static void hash_scalar(uint64_t h[2], double v)
{
    hash_u64(h, lt_scalar_is_special(v) ? double_bits(v) : 0x5ca1a2ull);
}

static void hash_attrs(uint64_t h[2], const lt_attrs *a)
{
    /* flag apart: packed above an unset dtype (-1, all ones) its bits
     * vanished, and ops differing only in a flag (sort ascending and
     * descending, quantile and nanquantile) shared one program */
    hash_u64(h, (uint64_t)a->ni | ((uint64_t)a->nf << 8) | ((uint64_t)(uint32_t)a->dtype << 16));
    hash_u64(h, (uint64_t)(uint32_t)a->flag);
    for (int i = 0; i < a->ni; i++)
        hash_u64(h, (uint64_t)a->i[i]);
    for (int i = 0; i < a->nf; i++)
        hash_scalar(h, a->f[i]);
}

void lt_ir_hash_init(uint64_t h[2])
{
    h[0] = 0x6c617a7974656e73ull;
    h[1] = 0x2d69722d68617368ull;
}

void lt_ir_hash_u64(uint64_t h[2], uint64_t v) { hash_u64(h, v); }

/* ---- arena ---------------------------------------------------------------- */

/* Makes room for n more elements of size `size` in *list (capacity *cap,
 * first growth to `first`). */
static bool grow_list(void **list, uint32_t *cap, uint32_t count, uint32_t n, size_t size, uint32_t first)
{
    if (count + n <= *cap)
        return true;
    uint32_t c = *cap ? *cap * 2 : first;
    while (c < count + n)
        c *= 2;
    void *grown = realloc(*list, size * c);
    if (!grown)
        return false;
    *list = grown;
    *cap = c;
    return true;
}

static bool reserve(uint32_t extra_nodes, uint32_t extra_inputs, uint32_t extra_metas)
{
    if (node_count + extra_nodes <= node_cap && input_count + extra_inputs <= input_cap &&
        meta_count + extra_metas <= meta_cap && attrs_count < attrs_cap)
        return true; /* the common case: no list grows */
    bool first_metas = metas == NULL;
    if (!grow_list((void **)&metas, &meta_cap, meta_count, extra_metas, sizeof *metas, 1024))
        return false;
    if (first_metas)
        metas[0] = scalar_meta;
    return grow_list((void **)&nodes, &node_cap, node_count, extra_nodes, sizeof *nodes, 1024) &&
           grow_list((void **)&inputs, &input_cap, input_count, extra_inputs, sizeof *inputs, 2048) &&
           grow_list((void **)&attrs_list, &attrs_cap, attrs_count, 1, sizeof *attrs_list, 256);
}

static bool room_for_node(uint32_t nin, uint32_t nmeta)
{
    if (node_count >= UINT32_MAX - 1 || meta_count >= UINT32_MAX - LT_MAX_OUTPUTS ||
        attrs_count >= UINT32_MAX - 1 || !reserve(1, nin, nmeta)) {
        lt_error(LT_ERR_MEMORY, "lazy: out of memory recording the IR graph");
        return false;
    }
    return true;
}

/* A leaf as it starts: no inputs, no op, no origin, the attributes of
 * lt_attrs_init (all cleared, dtype -1), the scalars' meta; one copy
 * instead of clearing field by field. */
static const lt_node leaf_template = {.nout = 1, .first_meta = 0, .attrs_index = LT_IR_DEFAULT_ATTRS};

/* A leaf (data or scalar) of this kind. */
static lt_node *new_leaf(uint8_t kind)
{
    if (!room_for_node(0, 1))
        return NULL;
    lt_node *n = &nodes[node_count];
    *n = leaf_template;
    n->kind = kind;
    n->first_input = input_count;
    return n;
}

/*
 * The local hash of an op node starts with the op and its attributes. With
 * default attributes (no ints, no floats, no dtype, no flag: most ops) that
 * start depends on the op alone, so it is computed once per op and kept;
 * the hash is the same as computing it each time. Touched only by the
 * thread that owns the lazy device, like the arena.
 */
typedef struct op_hash_start {
    uint64_t h[2];
    bool known;
} op_hash_start;
static op_hash_start default_attrs_start[LT_OP_COUNT];

static bool attrs_are_default(const lt_attrs *a)
{
    return a->ni == 0 && a->nf == 0 && a->dtype == -1 && a->flag == 0;
}

static void hash_op_and_attrs(uint64_t h[2], lt_op op, const lt_attrs *a)
{
    op_hash_start *cached = attrs_are_default(a) ? &default_attrs_start[op] : NULL;
    if (cached && cached->known) {
        h[0] = cached->h[0];
        h[1] = cached->h[1];
        return;
    }
    lt_ir_hash_init(h);
    hash_u64(h, ((uint64_t)LT_NODE_OP << 32) | op);
    hash_attrs(h, a);
    if (cached) {
        cached->h[0] = h[0];
        cached->h[1] = h[1];
        cached->known = true;
    }
}

uint32_t lt_ir_add_op(lt_op op, const lt_value *in, uint32_t nin, const lt_attrs *a, const lt_meta *om)
{
    int nout = lt_op_infos[op].nout;
    if (!room_for_node(nin, (uint32_t)nout))
        return UINT32_MAX;
    /* every field is written below: no clearing of the whole node first */
    lt_node *n = &nodes[node_count];
    n->kind = LT_NODE_OP;
    n->nout = (uint8_t)nout;
    n->op = (uint16_t)op;
    n->nin = nin;
    n->first_input = input_count;
    n->first_meta = meta_count;
    for (int k = 0; k < nout; k++)
        metas[meta_count++] = om[k];
    if (attrs_are_default(a)) {
        n->attrs_index = LT_IR_DEFAULT_ATTRS;
    } else {
        n->attrs_index = attrs_count;
        attrs_list[attrs_count] = *a;
        attrs_list[attrs_count++].device = (lt_device){LT_DEVICE_CPU, 0}; /* not part of the graph */
    }
    n->scalar = 0;
    n->storage = NULL;
    n->tensor_id = 0;
    n->origin = current_origin;
    /* hashed in locals, kept in registers, then stored */
    uint64_t h[2];
    hash_op_and_attrs(h, op, a);
    for (int k = 0; k < nout; k++)
        hash_meta(h, &om[k]);
    n->local_hash[0] = h[0];
    n->local_hash[1] = h[1];
    for (uint32_t i = 0; i < nin; i++) {
        const lt_node *src = &nodes[in[i].node];
        hash_u64(h, src->hash[0] ^ (uint64_t)in[i].out);
        hash_u64(h, src->hash[1]);
    }
    n->hash[0] = h[0];
    n->hash[1] = h[1];
    for (uint32_t i = 0; i < nin; i++) /* a loop: one or two inputs, no memcpy call */
        inputs[input_count + i] = in[i];
    input_count += nin;
    return node_count++;
}

uint32_t lt_ir_add_data(lt_storage *s, const lt_meta *m, uint64_t tensor_id)
{
    lt_node *n = new_leaf(LT_NODE_DATA);
    if (!n)
        return UINT32_MAX;
    n->first_meta = meta_count;
    metas[meta_count++] = *m;
    n->storage = s;
    atomic_fetch_add(&s->refcount, 1);
    n->tensor_id = tensor_id;
    lt_ir_hash_init(n->local_hash);
    hash_u64(n->local_hash, (uint64_t)LT_NODE_DATA << 32);
    hash_meta(n->local_hash, m);
    n->hash[0] = n->local_hash[0];
    n->hash[1] = n->local_hash[1];
    return node_count++;
}

/* The hash of a scalar node: the kind, then the value if it is 0 or 1. */
static void scalar_node_hash(uint64_t h[2], double v)
{
    lt_ir_hash_init(h);
    hash_u64(h, (uint64_t)LT_NODE_SCALAR << 32);
    hash_scalar(h, v);
}

uint32_t lt_ir_add_scalar(double v)
{
    /* every parameter scalar hashes alike: that hash is computed once
     * (touched only by the device's owner, like the arena) */
    static uint64_t parameter_hash[2];
    static bool parameter_hash_known;
    lt_node *n = new_leaf(LT_NODE_SCALAR);
    if (!n)
        return UINT32_MAX;
    n->scalar = v; /* its output is the shared meta 0 (leaf_template) */
    if (lt_scalar_is_special(v)) {
        scalar_node_hash(n->local_hash, v);
    } else {
        if (!parameter_hash_known) {
            scalar_node_hash(parameter_hash, v);
            parameter_hash_known = true;
        }
        n->local_hash[0] = parameter_hash[0];
        n->local_hash[1] = parameter_hash[1];
    }
    n->hash[0] = n->local_hash[0];
    n->hash[1] = n->local_hash[1];
    return node_count++;
}

/* ---- origins ------------------------------------------------------------- */

lt_origin lt_origin_set(lt_origin o)
{
    lt_origin saved = current_origin;
    current_origin = o;
    return saved;
}

const char *lt_origin_current(void) { return current_origin.name; }

lt_origin lt_origin_enter(const char *name)
{
    lt_origin saved = current_origin;
    if (!current_origin.name) /* the outermost public function is the user's call */
        current_origin = (lt_origin){name, false};
    return saved;
}

/* The origin of the node behind a lazy tensor's pending value, if any. */
static lt_origin origin_of(const lt_tensor *t)
{
    const lt_lazy *z = t && t->device.kind == LT_DEVICE_LAZY ? t->lazy : NULL;
    if (z && z->pending && z->generation == generation && z->value.node < node_count)
        return nodes[z->value.node].origin;
    return (lt_origin){NULL, false};
}

lt_origin lt_origin_enter_backward(const lt_tensor *forward_out, lt_op op)
{
    lt_origin o = origin_of(forward_out);
    if (!o.name)
        o.name = lt_op_name(op);
    o.backward = true;
    return lt_origin_set(o);
}

void lt_ir_reset(void)
{
    for (uint32_t i = 0; i < node_count; i++) {
        lt_storage_unref(nodes[i].storage);
    }
    node_count = 0;
    input_count = 0;
    meta_count = 1;
    attrs_count = 0;
    generation++;
}
