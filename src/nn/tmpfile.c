/*
 * tmpfile.c - the temporary files behind atomic saves, and the removal of
 * those that writers killed part-way left behind.
 *
 * A temp file is named "<target>.tmp.<pid>.<16 hex digits>": the
 * writer's pid tells a later save whether its writer is still alive, and
 * the random part keeps concurrent saves of one process apart and makes
 * the name impossible to guess in advance.
 */
#include "nn/safetensors_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_TAG ".tmp."
#define TMP_TAG_LEN (sizeof TMP_TAG - 1)
#define RANDOM_DIGITS 16
#define CREATE_ATTEMPTS 16

size_t lt_tmpfile_name_cap(const char *path)
{
    return strlen(path) + TMP_TAG_LEN + 20 /* pid */ + 1 + RANDOM_DIGITS + 1;
}

/* 64 unpredictable bits (the kernel's generator; a mix of clock, pid and a
 * counter if it is unavailable, which O_EXCL still makes safe). */
static uint64_t random_bits(void)
{
    uint64_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v)
        return v;
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40);
    return v ^ (atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15ull);
}

int lt_tmpfile_create(const char *path, char *tmp, size_t cap)
{
    for (int attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
        snprintf(tmp, cap, "%s" TMP_TAG "%ld.%016llx", path, (long)getpid(), (unsigned long long)random_bits());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

static bool is_lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

/* The writer pid of a temp file name "<target>.tmp.<pid>.<hex>", or 0
 * when name does not follow that pattern exactly. */
static pid_t writer_pid(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 + TMP_TAG_LEN + 2 + RANDOM_DIGITS) /* target, tag, pid, dot, hex */
        return 0;
    const char *hex = name + n - RANDOM_DIGITS;
    for (int i = 0; i < RANDOM_DIGITS; i++)
        if (!is_lower_hex(hex[i]))
            return 0;
    const char *dot = hex - 1, *digits = dot;
    while (digits > name && digits[-1] >= '0' && digits[-1] <= '9')
        digits--;
    if (*dot != '.' || digits == dot || (size_t)(digits - name) <= TMP_TAG_LEN ||
        strncmp(digits - TMP_TAG_LEN, TMP_TAG, TMP_TAG_LEN) != 0)
        return 0;
    long pid = 0;
    for (const char *p = digits; p < dot; p++) {
        pid = pid * 10 + (*p - '0');
        if (pid > INT_MAX)
            return 0;
    }
    return (pid_t)pid;
}

/* ESRCH is the only proof of death: EPERM means a live process of
 * another user, which keeps its file. */
static bool process_is_dead(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

/* The directory part of path ("." when there is none), malloc'd. */
static char *directory_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    return slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
}

void lt_tmpfile_sweep_stale(const char *path)
{
    char *dir = directory_of(path);
    int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    free(dir);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    int saved_errno = errno;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        pid_t pid = writer_pid(e->d_name);
        if (pid <= 0 || pid == getpid() || !process_is_dead(pid))
            continue;
        struct stat sb;
        if (fstatat(dfd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
            sb.st_uid == geteuid())
            unlinkat(dfd, e->d_name, 0);
    }
    closedir(d);
    errno = saved_errno;
}
