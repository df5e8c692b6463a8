/* test_hostile_memory.c - when the OS refuses memory, the caching
 * allocator gives back the buffers it keeps on its free lists and retries
 * before reporting out of memory. The OS refusal is real: a forked child
 * runs under an address-space limit (setrlimit RLIMIT_AS), which
 * AddressSanitizer's shadow memory cannot run under, so the sanitized
 * build skips these tests. */
#include "lt_test.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define MB ((int64_t)1 << 20)

/* Address space the process maps now (bytes), from /proc/self/statm. */
static int64_t mapped_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long long pages = -1;
    if (!f || fscanf(f, "%lld", &pages) != 1)
        pages = -1;
    if (f)
        fclose(f);
    return pages < 0 ? -1 : pages * (int64_t)sysconf(_SC_PAGESIZE);
}

/* Exit codes of the child, for the parent's message. */
enum { CHILD_OK = 0, CHILD_SETUP = 10, CHILD_FIRST = 11, CHILD_RETRY = 12, CHILD_STATS = 13 };

/*
 * Under a limit of (mapped now + 300 MB): six 40 MB tensors are made and
 * released (240 MB stay cached, well under the 2 GiB cache limit), then one
 * 160 MB tensor of another size class is asked for. Only the cache stands
 * between that request and success.
 */
static int child_allocate_after_release(void)
{
    int64_t now = mapped_bytes();
    if (now < 0)
        return CHILD_SETUP;
    struct rlimit lim = {(rlim_t)(now + 300 * MB), (rlim_t)(now + 300 * MB)};
    if (setrlimit(RLIMIT_AS, &lim) != 0)
        return CHILD_SETUP;
    lt_tensor *t[6];
    for (int i = 0; i < 6; i++)
        if (!(t[i] = lt_empty((const int64_t[]){40 * MB}, 1, LT_U8, lt_device_cpu())))
            return CHILD_FIRST;
    for (int i = 0; i < 6; i++)
        lt_release(t[i]);
    lt_mem_stats s;
    lt_mem_stats_get(&s);
    if (s.bytes_cached < 240 * MB)
        return CHILD_STATS;
    lt_tensor *big = lt_empty((const int64_t[]){160 * MB}, 1, LT_U8, lt_device_cpu());
    if (!big) {
        fprintf(stderr, "child: %s\n", lt_last_error());
        return CHILD_RETRY;
    }
    lt_mem_stats_get(&s);
    if (s.bytes_cached != 0 || s.os_frees < 6) /* the cache was emptied to make room */
        return CHILD_STATS;
    lt_release(big);
    return CHILD_OK;
}

static void test_alloc_empties_cache_when_os_refuses(void **state)
{
    (void)state;
    if (UNDER_ASAN) {
        print_message("RLIMIT_AS cannot be used under AddressSanitizer: skipped\n");
        skip();
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_allocate_after_release());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), CHILD_OK);
}

/* The same limit, and memory that is simply not there: the error still
 * says out of memory, after the retry, and the cache is left empty. */
static int child_really_out_of_memory(void)
{
    int64_t now = mapped_bytes();
    struct rlimit lim = {(rlim_t)(now + 100 * MB), (rlim_t)(now + 100 * MB)};
    if (now < 0 || setrlimit(RLIMIT_AS, &lim) != 0)
        return CHILD_SETUP;
    lt_tensor *small = lt_empty((const int64_t[]){10 * MB}, 1, LT_U8, lt_device_cpu());
    if (!small)
        return CHILD_FIRST;
    lt_release(small);
    if (lt_empty((const int64_t[]){200 * MB}, 1, LT_U8, lt_device_cpu()))
        return CHILD_RETRY;
    if (lt_last_status() != LT_ERR_MEMORY || !strstr(lt_last_error(), "empty: out of memory allocating 209715200"))
        return CHILD_RETRY;
    lt_mem_stats s;
    lt_mem_stats_get(&s);
    return s.bytes_cached == 0 ? CHILD_OK : CHILD_STATS;
}

static void test_alloc_reports_out_of_memory_after_retry(void **state)
{
    (void)state;
    if (UNDER_ASAN) {
        print_message("RLIMIT_AS cannot be used under AddressSanitizer: skipped\n");
        skip();
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_really_out_of_memory());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), CHILD_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_alloc_empties_cache_when_os_refuses),
        LT_TEST(test_alloc_reports_out_of_memory_after_retry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
