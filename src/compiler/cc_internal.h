/*
 * cc_internal.h - the pieces of the compiler driver (cc.c) that live in
 * their own files: running the compiler without a shell (cc_run.c) and the
 * disk cache with its directory checks (cc_cache.c). Not used outside
 * src/compiler/cc*.c.
 */
#ifndef LT_CC_INTERNAL_H
#define LT_CC_INTERNAL_H

#include "compiler/compiler.h"

#include <sys/types.h>

/* 128-bit hash of n bytes, folded into h (lazy/ir.c's mixer). */
void cc_hash_bytes(uint64_t h[2], const void *data, size_t n);

/* snprintf that reports truncation (false) instead of warning about it. */
bool cc_format(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- cc_run.c: processes ------------------------------------------------------------------------ */

/* A growable, NULL-terminated argument vector of owned strings. */
typedef struct cc_argv {
    char **v;
    int n, cap;
} cc_argv;

bool cc_argv_push(cc_argv *a, const char *word);
bool cc_argv_append(cc_argv *a, const cc_argv *words);
void cc_argv_free(cc_argv *a);

/* Appends the words of text, split as the POSIX shell splits words
 * (blanks separate; '...', "..." and backslash quote) but with nothing
 * expanded or run: ; | & $ ` and the like are ordinary characters. `what`
 * names the setting in the error (why) of a bad quote. */
bool cc_split_words(const char *text, const char *what, cc_argv *out, char *why, size_t cap);

/* Seconds on a monotonic clock. */
double cc_now(void);

/* Starts argv[0] (searched in PATH) in a process group of its own, in the
 * directory dir_fd (-1: ours), with stdin from /dev/null and stdout and
 * stderr on out_fd and err_fd (-1: /dev/null). Returns its pid, or -1
 * with errno set. */
pid_t cc_spawn(char *const argv[], int dir_fd, int out_fd, int err_fd);

#define CC_EXIT_FAILED (-1)    /* could not be waited for, or died of a signal */
#define CC_EXIT_TIMED_OUT (-2) /* killed at the deadline */

/* Waits for n (at most 4) processes started by cc_spawn until `deadline`
 * (cc_now() seconds). Whatever still runs then is killed with its whole
 * process group (the compiler driver's cc1, as and ld with it) and
 * reaped. status[i]: the exit status, CC_EXIT_FAILED or CC_EXIT_TIMED_OUT. */
void cc_wait(const pid_t *pid, int n, double deadline, int *status);

/* Waits until one of the processes pid[i] (i < n) not yet done[i] ends,
 * or passes its deadline[i] (then it is killed with its process group, as
 * by cc_wait); marks it done, sets status[i] as cc_wait does and returns
 * i. Returns -1 when none is left (pid[i] <= 0 counts as done). */
int cc_wait_one(const pid_t *pid, int n, const double *deadline, bool *done, int *status);

/* ---- cc_cache.c: the cache directory and its files ----------------------------------------------- */

/* The directory compiled programs are kept in: the disk cache, or, when
 * that is refused, a private temporary directory removed at exit. Every
 * file operation goes through fd, which was checked when it was opened. */
typedef struct cc_dir {
    int fd;
    bool is_private;
    char path[1024];
} cc_dir;

/* Opens the configured cache directory (LT_CACHE_DIR, else
 * $HOME/.cache/lazytensor, else /tmp/lazytensor-cache-<uid>), creating it
 * 0700. One that is a symlink, is not ours or is writable by others is
 * refused with a warning on stderr, and a private directory is used
 * instead. False (why set) when neither is possible. */
bool cc_dir_open(cc_dir *d, char *why, size_t cap);

/* A file created in dir_fd: exclusively (never an existing file, never
 * through a symlink), 0600, close-on-exec. -1 with errno on failure. */
int cc_create_file(int dir_fd, const char *name);

/* Writes all n bytes to fd. */
bool cc_write_all(int fd, const void *data, size_t n);

/* The whole regular file `name` in dir_fd (not followed if a symlink),
 * NUL-terminated, at most max bytes; NULL otherwise. */
unsigned char *cc_read_file_at(int dir_fd, const char *name, size_t max, size_t *len);

/* A new build directory in d, under an unpredictable name tmp-XXXXXXXXXXXX
 * (name receives it, 32 bytes); returns its fd (or -1, errno set). */
int cc_build_dir_make(const cc_dir *d, char *name);
/* Removes the build directory and whatever the compiler left in it. */
void cc_build_dir_remove(const cc_dir *d, const char *name, int fd);

/* Loads d/<name> if it is a regular file of ours, at most 1 GiB, whose
 * bytes pass lt_cc_object_valid for key; anything else there is deleted
 * (*corrupt set) and NULL returned, with the reason in why. */
void *cc_cache_load(const cc_dir *d, const char *name, const uint64_t key[2], bool *corrupt, char *why, size_t cap);

/* Appends the trailer to the object `name` in build_fd and moves it to
 * d/<final_name> (atomically replacing whatever is there). */
bool cc_cache_store(const cc_dir *d, int build_fd, const char *name, const char *final_name, const uint64_t key[2]);

/* Writes a small file d/<final_name> whole: to a temporary name first,
 * then renamed into place (a reader never sees part of it). */
bool cc_cache_put(const cc_dir *d, const char *final_name, const void *data, size_t n);

/* ---- cc.c, for the plan cache (plan_cache.c) ---------------------------------------------------- */

/* Once the compiler is known to work: the cache directory, and the
 * toolchain's identity in id; NULL before (or when it stopped working).
 * Never waits for a build in progress. */
const cc_dir *cc_usable_dir(uint64_t id[2]);
/* Loads the cached object of key (as lt_cc_lookup does once it has the
 * key): validated, counted as a DiskCacheHit; false if absent or damaged. */
bool cc_lookup_object(const uint64_t key[2], void **handle, void **entry);

/* Keeps d under LT_CACHE_MAX_MB (never evicting `keep`) and removes build
 * directories left by crashed processes (older than stale_s seconds). */
void cc_cache_evict(const cc_dir *d, const char *keep, double stale_s);

#endif
