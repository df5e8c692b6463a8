/*
 * plan_cache.h - the disk cache of execution plans (plan_cache.c, bytes in
 * plan_codec.c): a graph met again in a new process finds its program's
 * buffer table and eager calls next to its object, keyed by the graph
 * itself, and runs without being scheduled, planned and rendered again.
 */
#ifndef LT_COMPILER_PLAN_CACHE_H
#define LT_COMPILER_PLAN_CACHE_H

#include "compiler/kir.h"

/* Counters of a compile, set as metrics whether it was compiled or loaded. */
typedef struct kir_plan_info {
    int64_t kernels, functions, calls, fused_gemm, bytes, units, cold_units, warm_units;
} kir_plan_info;

typedef struct kir_bytes {
    unsigned char *p;
    size_t n;
} kir_bytes;

/* The canonical bytes of g: everything its compiled program depends on
 * (what the graph key hashes; runtime scalars as "a parameter"). */
bool kir_graph_bytes(const lt_graph *g, kir_bytes *out);
void kir_graph_bytes_free(kir_bytes *b);

/* A cache entry for plan p (built for the graph whose bytes are `graph`)
 * whose program is the object of key `object`; malloc'd, *len bytes. */
unsigned char *kir_plan_encode(const kir_plan *p, const kir_plan_info *info, const kir_bytes *graph,
                               const uint64_t key[2], const uint64_t object[2], size_t *len);
/* Reads an entry: true only when bytes[0, len) are intact, stored under
 * `key`, hold exactly the graph bytes `graph` (of g) and a plan whose
 * every index, size and view is valid for g; then *p (with its own copy
 * of g), *info and object are set. Reads nothing outside bytes[0, len);
 * no I/O. */
bool kir_plan_decode(const unsigned char *bytes, size_t len, const lt_graph *g, const kir_bytes *graph,
                     const uint64_t key[2], kir_plan *p, kir_plan_info *info, uint64_t object[2]);

/* kir_plan_decode's verdict alone (no copy of the graph kept). */
bool kir_plan_check(const unsigned char *bytes, size_t len, const lt_graph *g, const kir_bytes *graph,
                    const uint64_t key[2]);

/* The plan and loaded program of g from the disk cache (counted as
 * PlanCacheHit, else PlanCacheMiss; a damaged entry is deleted and counted
 * as PlanCacheCorrupt). False, with nothing set, when there is none, when
 * its object is gone, or when the compiler is not usable. Never waits for
 * a build in progress. */
bool kir_plan_cache_load(const lt_graph *g, kir_plan *p, kir_plan_info *info, void **handle, void **entry);
/* Stores plan p (its graph is p->g) for the object of key object_hex (32
 * hex digits, from lt_cc_load or lt_cc_lookup). Best effort: a failure
 * only means the next process renders the program again. */
void kir_plan_cache_store(const kir_plan *p, const kir_plan_info *info, const char *object_hex);

#endif
