/*
 * alloc.c - the caching buffer allocator.
 *
 * Buffers are rounded up to size classes (64-byte steps up to 4 KiB, then
 * four steps per power of two) and, when freed, kept on a per-class free
 * list for reuse. Steady-state training therefore takes no fresh pages from
 * the OS: page faults on fresh outputs otherwise dominate large elementwise
 * chains. A header before each buffer records its class. When the OS
 * refuses a request, the cache is emptied and the request retried once, so
 * memory parked on the free lists of other classes is never the reason an
 * allocation fails.
 */
#include "core/core.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HEADER_BYTES 64
#define SMALL_LIMIT 4096
#define SMALL_CLASSES (SMALL_LIMIT / 64)
#define NUM_CLASSES (SMALL_CLASSES + 64 * 4)
#define BLOCK_MAGIC 0x4c54424cu
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

typedef struct block_header {
    uint32_t magic;
    int32_t size_class;
    struct block_header *next_free;
} block_header;

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static block_header *free_lists[NUM_CLASSES];
static lt_mem_stats stats;
static int64_t cache_limit = -1; /* -1: not yet read from the environment */

static size_t class_size(int c)
{
    if (c < SMALL_CLASSES)
        return (size_t)(c + 1) * 64;
    int k = (c - SMALL_CLASSES) / 4 + 12; /* 2^12 = SMALL_LIMIT */
    int q = (c - SMALL_CLASSES) % 4;
    return ((size_t)1 << k) + (size_t)q * ((size_t)1 << (k - 2));
}

/* Smallest class whose size is >= n (n <= 2^62). */
static int class_of(size_t n)
{
    if (n <= SMALL_LIMIT)
        return n == 0 ? 0 : (int)((n + 63) / 64) - 1;
    int k = 63 - __builtin_clzll((unsigned long long)n); /* 2^k <= n */
    if (((size_t)1 << k) == n)
        return SMALL_CLASSES + (k - 12) * 4;
    size_t quarter = (size_t)1 << (k - 2);
    size_t q = (n - ((size_t)1 << k) + quarter - 1) / quarter; /* 1..4 */
    if (q == 4)
        return SMALL_CLASSES + (k + 1 - 12) * 4;
    return SMALL_CLASSES + (k - 12) * 4 + (int)q;
}

static int64_t current_cache_limit(void)
{
    if (cache_limit < 0) {
        const char *env = getenv("LT_MEM_CACHE_LIMIT");
        long long v = env ? atoll(env) : -1;
        cache_limit = v >= 0 ? v : (int64_t)2 << 30;
    }
    return cache_limit;
}

static bool cache_nonempty(void)
{
    pthread_mutex_lock(&alloc_lock);
    bool any = stats.bytes_cached > 0;
    pthread_mutex_unlock(&alloc_lock);
    return any;
}

/* Accounts a buffer of class size `size` as in use (lock held). */
static void account_in_use(size_t size)
{
    stats.bytes_in_use += (int64_t)size;
    stats.live_buffers++;
    if (stats.bytes_in_use > stats.peak_bytes)
        stats.peak_bytes = stats.bytes_in_use;
}

/*
 * The cache holds freed buffers of other size classes that the OS could
 * give back: when the OS refuses a request, empty the cache and retry once
 * before reporting out of memory.
 */
static void *aligned_alloc_for(size_t bytes)
{
    if (bytes < HUGE_PAGE_BYTES)
        return aligned_alloc(64, bytes);
    /* Large buffers start on a huge-page boundary and ask for huge pages:
     * a fresh buffer then costs one page fault per 2 MiB instead of one
     * per 4 KiB, which is most of a cold training step's first-touch cost.
     * The size is not rounded up: a partial last huge page gets small pages. */
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE_BYTES, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES, MADV_HUGEPAGE);
#endif
    return p;
}

static void *os_aligned_alloc(size_t bytes)
{
    void *p = aligned_alloc_for(bytes);
    if (!p && cache_nonempty()) {
        lt_mem_trim();
        p = aligned_alloc_for(bytes);
    }
    return p;
}

void *lt_sys_malloc(size_t nbytes)
{
    void *p = malloc(nbytes);
    if (!p && nbytes > 0 && cache_nonempty()) {
        lt_mem_trim();
        p = malloc(nbytes);
    }
    return p;
}

void *lt_sys_realloc(void *ptr, size_t nbytes)
{
    void *p = realloc(ptr, nbytes);
    if (!p && nbytes > 0 && cache_nonempty()) {
        lt_mem_trim();
        p = realloc(ptr, nbytes);
    }
    return p;
}

void *lt_alloc(size_t nbytes, const char *op)
{
    if (nbytes > ((size_t)1 << 62)) {
        lt_error(LT_ERR_MEMORY, "%s: cannot allocate %zu bytes", op, nbytes);
        return NULL;
    }
    int c = class_of(nbytes);
    size_t size = class_size(c);
    pthread_mutex_lock(&alloc_lock);
    block_header *h = free_lists[c];
    if (h) { /* the common, steady-state path: one lock, no OS call */
        free_lists[c] = h->next_free;
        stats.bytes_cached -= (int64_t)size;
        stats.cache_hits++;
        account_in_use(size);
    }
    pthread_mutex_unlock(&alloc_lock);
    if (!h) {
        h = os_aligned_alloc(size + HEADER_BYTES);
        if (!h) {
            lt_error(LT_ERR_MEMORY, "%s: out of memory allocating %zu bytes (the buffer cache was emptied first)",
                     op, nbytes);
            return NULL;
        }
        h->magic = BLOCK_MAGIC;
        h->size_class = c;
        pthread_mutex_lock(&alloc_lock);
        stats.os_allocs++;
        account_in_use(size);
        pthread_mutex_unlock(&alloc_lock);
    }
    h->next_free = NULL;
    return (char *)h + HEADER_BYTES;
}

void lt_free(void *ptr)
{
    if (!ptr)
        return;
    block_header *h = (block_header *)((char *)ptr - HEADER_BYTES);
    if (h->magic != BLOCK_MAGIC)
        abort(); /* internal invariant: only lt_alloc buffers come here */
    size_t size = class_size(h->size_class);
    bool to_os = false;
    pthread_mutex_lock(&alloc_lock);
    stats.bytes_in_use -= (int64_t)size;
    stats.live_buffers--;
    if (stats.bytes_cached + (int64_t)size <= current_cache_limit()) {
        h->next_free = free_lists[h->size_class];
        free_lists[h->size_class] = h;
        stats.bytes_cached += (int64_t)size;
    } else {
        stats.os_frees++;
        to_os = true;
    }
    pthread_mutex_unlock(&alloc_lock);
    if (to_os)
        free(h);
}

void lt_mem_stats_get(lt_mem_stats *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&alloc_lock);
    *s = stats;
    pthread_mutex_unlock(&alloc_lock);
}

void lt_mem_trim(void)
{
    pthread_mutex_lock(&alloc_lock);
    for (int c = 0; c < NUM_CLASSES; c++) {
        while (free_lists[c]) {
            block_header *h = free_lists[c];
            free_lists[c] = h->next_free;
            stats.bytes_cached -= (int64_t)class_size(c);
            stats.os_frees++;
            free(h);
        }
    }
    pthread_mutex_unlock(&alloc_lock);
}

void lt_mem_reset_peak(void)
{
    pthread_mutex_lock(&alloc_lock);
    stats.peak_bytes = stats.bytes_in_use;
    pthread_mutex_unlock(&alloc_lock);
}

void lt_mem_set_cache_limit(int64_t bytes)
{
    pthread_mutex_lock(&alloc_lock);
    cache_limit = bytes < 0 ? 0 : bytes;
    bool over = stats.bytes_cached > cache_limit;
    pthread_mutex_unlock(&alloc_lock);
    if (over)
        lt_mem_trim();
}
