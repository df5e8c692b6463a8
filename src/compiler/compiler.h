/*
 * compiler.h - the cpu compiler backend: a lazy graph goes in, one native
 * program (C rendered by the compiler, built with the system C compiler,
 * loaded with dlopen) comes out.
 *
 * Environment:
 *   LT_CC            C compiler command (default "cc")
 *   LT_CFLAGS        its flags (default LT_CC_DEFAULT_FLAGS). Both are split
 *                    into words like the shell does (blanks separate, quotes
 *                    and backslashes group) and run without a shell, in a
 *                    private build directory (give absolute paths).
 *   LT_CFLAGS_COLD   flags added after LT_CFLAGS (so its -O wins) for "cold"
 *                    units: kernels whose work per run (under 16,384
 *                    operations, units.c's COLD_WORK) is too small to gain
 *                    from LT_CFLAGS' optimization (default "-O0": half the
 *                    compile time of -O1; empty: every unit is built with
 *                    LT_CFLAGS alone)
 *   LT_CFLAGS_WARM   flags added after LT_CFLAGS for "warm" units: in a
 *                    program too large for one unit, the kernels that do
 *                    the least work per unit of compile cost, beyond the hot
 *                    quarter of the program's compile cost (units.c; default
 *                    LT_CC_DEFAULT_WARM_FLAGS, "-O2 -fvect-cost-model=dynamic";
 *                    empty: LT_CFLAGS alone)
 *   LT_CC_JOBS       compiler processes run at once for a program of several
 *                    units (default: the online CPUs, at most
 *                    LT_CC_MAX_UNITS)
 *   LT_CC_TIMEOUT    seconds a compiler run may take (default 120); then it
 *                    is killed and the process compiles nothing more (lazy
 *                    graphs run with the interp backend)
 *   LT_CACHE_DIR     disk cache of built programs (default
 *                    ~/.cache/lazytensor, without HOME
 *                    /tmp/lazytensor-cache-<uid>); created 0700, and refused
 *                    (with a warning; programs are then built in a private
 *                    temporary directory) if it is a symlink, belongs to
 *                    another user or is writable by group or others
 *   LT_CACHE_MAX_MB  bound on the disk cache (default 512; oldest evicted first)
 *   LT_DUMP_KERNELS  directory: the generated C of every compiled graph
 *                    (graph-<hash>.c, or graph-<hash>.part<i>.c for each
 *                    unit of a program of several); set, graphs are always
 *                    rendered (the plan cache is not read)
 *   LT_TIERED        0: the lazy device's default backend is "cpu" (each new
 *                    graph waits for its compile) instead of "tiered" (a new
 *                    graph runs on interp while this compiler builds it in
 *                    the background: src/backend/tiered.c, whose counters
 *                    are BackgroundCompiles, InterpTierRuns, TierSwaps and
 *                    BackgroundCompileFailures)
 * Counters: "Kernels" (kernels of the last program compiled or found in
 * the plan cache by a barrier: the tiered backend's background builds set
 * none of these program counters), "KernelCalls"
 * (of which eager calls), "ProgramBytes" (its C source), "TranslationUnits"
 * (and "ColdUnits" of them), "DiskCacheHit", "DiskCacheMiss",
 * "CompileErrors", "DiskCacheCorrupt"; the plan cache (plan_cache.h):
 * "PlanCacheHit", "PlanCacheMiss", "PlanCacheCorrupt", "PlanCacheStores",
 * "PlanCacheRefused".
 */
#ifndef LT_COMPILER_H
#define LT_COMPILER_H

#include "backend/backend.h"

/* -fopenmp-simd: generated code uses `omp simd` hints only; its parallel
 * loops run on the library's pool (src/core/pool.h), not OpenMP's.
 * -fno-trapping-math: no program reads the floating-point exception flags,
 * and without it GCC will not if-convert the selects of lt_expf/lt_erff,
 * leaving every loop that calls them scalar; it changes no value. */
#define LT_CC_DEFAULT_FLAGS "-O3 -march=native -fopenmp-simd -fno-math-errno -fno-trapping-math -ffp-contract=off -fPIC -shared"
#define LT_CC_DEFAULT_COLD_FLAGS "-O0"
/* Warm units: -O2 with -O3's vectorizer cost model (-O2's "very cheap"
 * model leaves loops of unknown trip count, such as a parallel chunk's,
 * scalar). Against -O3 for every unit, the GPT step of bench/peers_step
 * compiles its programs in about 20% less compiler CPU, and its generated
 * code takes the same share of a step (perf samples against OpenBLAS's
 * sgemm kernel, whose code no setting changes). "-O1 -ftree-vectorize"
 * saves about 40%, for generated code about 15% slower. */
#define LT_CC_DEFAULT_WARM_FLAGS "-O2 -fvect-cost-model=dynamic"

/* The cpu backend (src/backend/cpu.c). */
const lt_backend *lt_backend_cpu(void);

/* True when the C compiler works (checked once: `cc --version` and one
 * probe build; false from the moment a compiler run timed out); otherwise
 * writes the reason into why (if not NULL). */
bool lt_cc_available(char *why, size_t cap);

/* A program's source is one or more translation units (render.c decides
 * how many, units.c how): unit i is bytes [begin, end) of the text, and
 * its tier says how hard the C compiler optimizes it: hot units with
 * LT_CFLAGS, warm ones with LT_CFLAGS_WARM after LT_CFLAGS, cold ones
 * (only kernels with too little work per run to gain from optimization)
 * with LT_CFLAGS_COLD after LT_CFLAGS. */
#define LT_CC_MAX_UNITS 8
typedef enum lt_cc_tier { LT_CC_HOT, LT_CC_WARM, LT_CC_COLD, LT_CC_TIERS } lt_cc_tier;
typedef struct lt_cc_unit {
    size_t begin, end;
    lt_cc_tier tier;
} lt_cc_unit;

/*
 * The shared object built from the C source src, in nunits (1 ..
 * LT_CC_MAX_UNITS) translation units: loaded from the disk cache
 * (validated) or compiled, stored atomically and loaded. Several units
 * are compiled to objects by concurrent compiler processes (at most
 * LT_CC_JOBS at a time) and linked together. Sets *handle (for
 * lt_cc_unload) and *entry (the symbol lt_program_entry); key_hex receives
 * the cache key (33 bytes), which covers the text, the units and their
 * flags. A compile error returns LT_ERR_UNSUPPORTED with the compiler's
 * log, keeping the failing unit's source next to the cache. A run past
 * LT_CC_TIMEOUT is killed and returns LT_ERR_UNSUPPORTED too, after which
 * lt_cc_available is false (the caller may fall back to interp).
 */
lt_status lt_cc_load(const char *src, const lt_cc_unit *units, int nunits, void **handle, void **entry,
                     char *key_hex);
void lt_cc_unload(void *handle);

/*
 * lt_cc_load's disk-cache half: true (and *handle, *entry, key_hex set, a
 * DiskCacheHit counted) when the cache already holds a valid object for
 * src; false otherwise, without compiling anything and without waiting for
 * a build another thread is running. Used by the tiered backend to decide
 * at once between the native program and the interp tier.
 */
bool lt_cc_lookup(const char *src, const lt_cc_unit *units, int nunits, void **handle, void **entry,
                  char *key_hex);

/* The directory programs are cached in (opened and checked on first use):
 * the disk cache, or the private temporary directory used when the disk
 * cache was refused; NULL if there is neither. */
const char *lt_cc_cache_dir(void);

/* True only when bytes (a disk-cache file: object, then the 48-byte
 * trailer of magic, body length, checksum of the body and key) are intact
 * and built for `key`. Reads nothing outside bytes[0, len) on any input;
 * no I/O, so it can be fuzzed directly. */
bool lt_cc_object_valid(const unsigned char *bytes, size_t len, const uint64_t key[2]);

#endif
