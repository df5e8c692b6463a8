/*
 * fuzz_plan.c - the plan cache's decoder, kir_plan_decode, on hostile plan
 * entries whose checksum is right.
 *
 * A plan entry (src/compiler/plan_codec.c) is a header (magic, body
 * length, checksum, keys), the canonical bytes of the graph it was made
 * for, then the plan: buffers, kernels, calls, roots. A flipped byte is
 * caught by the checksum alone, so the fuzzer writes the header and the
 * graph bytes itself and mutates only the plan part, sealed with a correct
 * checksum: the decoder's own validation is what it drives.
 *
 * Input layout: one byte choosing the graph (even: relu((a @ b) * s) * c
 * with an eager call and a fused kernel; odd: w - lr * (a @ b), one fused
 * gemm update; tests/plan_graphs.h), then the plan part. Properties:
 *   - the decoder reads nothing outside the entry (the entry is copied into
 *     a buffer of exactly its size, so ASan reports any such read);
 *   - an accepted plan is in range for its graph (plan_in_range: every
 *     buffer, slot, offset, donor, root and call operand);
 *   - kir_plan_check gives the same verdict as kir_plan_decode.
 */
#include "fuzz_common.h"
#include "plan_graphs.h"

#include <stdlib.h>

#define HEADER_BYTES 64

static const uint64_t entry_key[2] = {0x1234, 0x5678}, object_key[2] = {0x9abc, 0xdef0};

typedef struct plan_target {
    small_graph sg;
    kir_bytes graph;
    unsigned char header[HEADER_BYTES];
} plan_target;

static plan_target targets[2];

/* Schedules and encodes the graph once, to take its header. */
static void prepare(plan_target *t, bool fused)
{
    if (fused)
        make_fused_graph(&t->sg, 4);
    else
        make_graph(&t->sg, 4);
    kir_plan plan;
    size_t len = 0;
    unsigned char *bytes = NULL;
    if (kir_schedule(&plan, &t->sg.g) == LT_OK && kir_memplan(&plan) == LT_OK && kir_graph_bytes(&t->sg.g, &t->graph)) {
        kir_plan_info info = {.kernels = plan.nk, .calls = plan.ncalls, .bytes = 1000, .units = 1};
        bytes = kir_plan_encode(&plan, &info, &t->graph, entry_key, object_key, &len);
    }
    if (!bytes || len < HEADER_BYTES) {
        FUZZ_FAIL("cannot encode the %s graph's plan", fused ? "fused" : "small");
    }
    memcpy(t->header, bytes, HEADER_BYTES);
    free(bytes);
    kir_plan_free(&plan);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_common_init();
    prepare(&targets[0], false);
    prepare(&targets[1], true);
    return 0;
}

/* header, graph length, graph bytes, then `plan`, sealed. */
static unsigned char *assemble(const plan_target *t, const uint8_t *plan, size_t n, size_t *len)
{
    *len = HEADER_BYTES + 8 + t->graph.n + n;
    unsigned char *e = malloc(*len);
    if (!e)
        return NULL;
    memcpy(e, t->header, HEADER_BYTES);
    uint64_t body = *len - HEADER_BYTES, glen = t->graph.n;
    memcpy(e + 8, &body, 8);
    memcpy(e + HEADER_BYTES, &glen, 8);
    memcpy(e + HEADER_BYTES + 8, t->graph.p, t->graph.n);
    if (n > 0)
        memcpy(e + HEADER_BYTES + 8 + t->graph.n, plan, n);
    plan_reseal(e, *len);
    return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const plan_target *t = &targets[data[0] & 1];
    size_t len;
    unsigned char *entry = assemble(t, data + 1, size - 1, &len);
    if (!entry)
        return 0;
    kir_plan p;
    kir_plan_info info;
    uint64_t object[2];
    bool accepted = kir_plan_decode(entry, len, &t->sg.g, &t->graph, entry_key, &p, &info, object);
    if (accepted) {
        FUZZ_CHECK(plan_in_range(&p, &t->sg.g), "kir_plan_decode accepted a plan out of range for its graph");
        kir_plan_free(&p);
    }
    FUZZ_CHECK(kir_plan_check(entry, len, &t->sg.g, &t->graph, entry_key) == accepted,
               "kir_plan_check and kir_plan_decode disagree (decode: %s)", accepted ? "accepted" : "refused");
    free(entry);
    lt_clear_error();
    return 0;
}
