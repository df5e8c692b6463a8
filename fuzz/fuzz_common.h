/*
 * fuzz_common.h - helpers shared by the libFuzzer targets in fuzz/.
 *
 * A target reports a broken property with FUZZ_FAIL: it prints what was
 * expected and what happened, then aborts, so libFuzzer saves the input as
 * a crash file (see fuzz/README.md for reproducing one).
 */
#ifndef LT_FUZZ_COMMON_H
#define LT_FUZZ_COMMON_H

#include "lazytensor.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_FAIL(...) fuzz_fail(__FILE__, __LINE__, __VA_ARGS__)
#define FUZZ_CHECK(cond, ...)                 \
    do {                                      \
        if (!(cond))                          \
            fuzz_fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

static void fuzz_fail(const char *file, int line, const char *fmt, ...) __attribute__((noreturn, format(printf, 3, 4)));
static void fuzz_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "\n==== FUZZ FINDING (%s:%d): ", file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n     last library error: %s: %s\n", lt_status_name(lt_last_status()), lt_last_error());
    va_end(ap);
    fflush(stderr);
    abort();
}

/* Settings every target wants: errors are returned, never fatal (whatever
 * the caller's environment says), and one kernel thread, so a run depends
 * on its input only and spends no time waking a pool. */
static inline void fuzz_common_init(void)
{
    unsetenv("LT_ERRORS");
    setenv("OMP_NUM_THREADS", "1", 1);
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    lt_set_num_threads(1);
}

/* An anonymous in-memory file holding some bytes, reachable by path
 * (/proc/self/fd/N) for loaders that take a path. */
typedef struct fuzz_file {
    int fd;
    char path[64];
} fuzz_file;

static inline bool fuzz_file_open(fuzz_file *f, const char *name, const void *data, size_t size)
{
    f->fd = memfd_create(name, MFD_CLOEXEC);
    if (f->fd < 0)
        return false;
    snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    const char *p = data;
    while (size > 0) {
        ssize_t w = write(f->fd, p, size);
        if (w <= 0) {
            close(f->fd);
            return false;
        }
        p += w;
        size -= (size_t)w;
    }
    return true;
}

static inline void fuzz_file_close(fuzz_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

/* The status of the call that just ran: a failure must come with a
 * status and a message. */
static inline lt_status fuzz_status_of(bool ok, const char *what)
{
    if (ok)
        return LT_OK;
    lt_status st = lt_last_status();
    FUZZ_CHECK(st != LT_OK, "%s failed without setting an error status", what);
    FUZZ_CHECK(lt_last_error()[0] != '\0', "%s failed (%s) with an empty message", what, lt_status_name(st));
    return st;
}

#endif
