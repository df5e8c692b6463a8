/*
 * plan_cache.c - execution plans on disk, next to the objects they run.
 *
 * Finding a program in the disk cache by its source (lt_cc_lookup) first
 * needs the source: the graph is scheduled, its memory planned and its C
 * rendered again in every new process (for the four graphs of
 * bench/peers_step's GPT workload about 40 ms of CPU).
 * A plan entry, <key>.plan, keeps what running the program needs besides
 * its object (buffer table, workspace size, root buffers, eager calls:
 * plan_codec.c) and the key of that object. Its own key hashes the
 * toolchain's identity (compiler version and flags, as for objects), the
 * build of this library (its GNU build ID: any change of the code
 * generator is a new build) and the graph's canonical bytes; the entry
 * holds those bytes too, and a hit must match them exactly.
 *
 * Every byte read is hostile: plan_codec.c checks the entry's checksum,
 * key, graph and every index and size; an entry that fails is deleted and
 * rebuilt from the graph. The object is then loaded as any cached object
 * (its own trailer and checksum). Entries are written whole to a temporary
 * name and renamed into place, and only after they decode (so a plan the
 * decoder would refuse is never stored). Without a build ID the plan
 * cache is off and programs are found by their source as before.
 */
#include "compiler/plan_cache.h"
#include "compiler/cc_internal.h"
#include "lazy/lazy.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLAN_FORMAT "lazytensor-plan-1"
#define MAX_PLAN_BYTES ((size_t)256 << 20)

/* ---- the library's build --------------------------------------------------------------------------- */

static uint64_t build_id[2];
static bool have_build_id;
static pthread_once_t build_id_once = PTHREAD_ONCE_INIT;

/* The GNU build ID note among the notes of one segment, hashed into
 * build_id; false if there is none. */
static bool hash_build_note(const unsigned char *p, size_t len)
{
    size_t at = 0;
    while (len - at >= sizeof(ElfW(Nhdr))) {
        ElfW(Nhdr) h;
        memcpy(&h, p + at, sizeof h);
        size_t name = ((size_t)h.n_namesz + 3) & ~(size_t)3, desc = ((size_t)h.n_descsz + 3) & ~(size_t)3;
        at += sizeof h;
        if (name > len - at || desc > len - at - name)
            return false;
        if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == 4 && memcmp(p + at, "GNU", 4) == 0 && h.n_descsz > 0) {
            lt_ir_hash_init(build_id);
            cc_hash_bytes(build_id, p + at + name, h.n_descsz);
            return true;
        }
        at += name + desc;
    }
    return false;
}

/* dl_iterate_phdr: the object that holds this function's code. */
static int find_own_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t self = (uintptr_t)data;
    bool mine = false;
    for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        mine = ph->p_type == PT_LOAD && self >= lo && self - lo < ph->p_memsz;
    }
    if (!mine)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && !have_build_id; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE)
            have_build_id = hash_build_note((const unsigned char *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz);
    }
    return 1;
}

static void read_build_id(void) { dl_iterate_phdr(find_own_object, (void *)(uintptr_t)&read_build_id); }

/* ---- keys ------------------------------------------------------------------------------------------ */

/* The directory and the entry's key and file name; false when the plan
 * cache cannot be used (no usable compiler, no build ID). */
static const cc_dir *entry_key(const kir_bytes *graph, uint64_t key[2], char name[48])
{
    pthread_once(&build_id_once, read_build_id);
    uint64_t toolchain[2];
    const cc_dir *d = have_build_id ? cc_usable_dir(toolchain) : NULL;
    if (!d)
        return NULL;
    lt_ir_hash_init(key);
    cc_hash_bytes(key, PLAN_FORMAT, sizeof PLAN_FORMAT - 1);
    lt_ir_hash_u64(key, toolchain[0]);
    lt_ir_hash_u64(key, toolchain[1]);
    lt_ir_hash_u64(key, build_id[0]);
    lt_ir_hash_u64(key, build_id[1]);
    cc_hash_bytes(key, graph->p, graph->n);
    cc_format(name, 48, "%016llx%016llx.plan", (unsigned long long)key[0], (unsigned long long)key[1]);
    return d;
}

/* 32 hex digits into two words. */
static bool parse_key(const char *hex, uint64_t key[2])
{
    for (int w = 0; w < 2; w++) {
        key[w] = 0;
        for (int i = 0; i < 16; i++) {
            char c = hex[16 * w + i];
            int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (v < 0)
                return false;
            key[w] = key[w] << 4 | (uint64_t)v;
        }
    }
    return hex[32] == '\0';
}

/* ---- load and store -------------------------------------------------------------------------------- */

bool kir_plan_cache_load(const lt_graph *g, kir_plan *p, kir_plan_info *info, void **handle, void **entry)
{
    kir_bytes graph;
    if (!kir_graph_bytes(g, &graph))
        return false;
    uint64_t key[2], object[2];
    char name[48];
    const cc_dir *d = entry_key(&graph, key, name);
    size_t len = 0;
    unsigned char *bytes = d ? cc_read_file_at(d->fd, name, MAX_PLAN_BYTES, &len) : NULL;
    bool ok = false;
    if (bytes) {
        ok = kir_plan_decode(bytes, len, g, &graph, key, p, info, object);
        if (!ok) { /* damaged, truncated or another graph: rebuilt from the graph */
            lt_metric_add("PlanCacheCorrupt", 1);
            unlinkat(d->fd, name, 0);
        }
    }
    free(bytes);
    kir_graph_bytes_free(&graph);
    if (ok && !cc_lookup_object(object, handle, entry)) { /* its object was evicted */
        kir_plan_free(p);
        ok = false;
    }
    if (d)
        lt_metric_add(ok ? "PlanCacheHit" : "PlanCacheMiss", 1);
    return ok;
}

void kir_plan_cache_store(const kir_plan *p, const kir_plan_info *info, const char *object_hex)
{
    kir_bytes graph;
    uint64_t object[2];
    if (!p->g || !object_hex || !parse_key(object_hex, object) || !kir_graph_bytes(p->g, &graph))
        return;
    uint64_t key[2];
    char name[48];
    const cc_dir *d = entry_key(&graph, key, name);
    size_t len = 0;
    unsigned char *bytes = d ? kir_plan_encode(p, info, &graph, key, object, &len) : NULL;
    if (bytes && kir_plan_check(bytes, len, p->g, &graph, key)) {
        if (cc_cache_put(d, name, bytes, len))
            lt_metric_add("PlanCacheStores", 1);
    } else if (bytes) {
        lt_metric_add("PlanCacheRefused", 1); /* a plan the decoder would not accept */
    }
    free(bytes);
    kir_graph_bytes_free(&graph);
}
