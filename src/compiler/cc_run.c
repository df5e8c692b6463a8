/*
 * cc_run.c - running the C compiler: LT_CC and LT_CFLAGS are split into
 * words here (never handed to a shell), the compiler is started with
 * posix_spawn in a process group of its own, and a run that outlives its
 * deadline is killed with its whole group and reaped.
 */
#include "compiler/cc_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- argument vectors --------------------------------------------------------------------------- */

bool cc_argv_push(cc_argv *a, const char *word)
{
    if (a->n + 2 > a->cap) {
        int cap = a->cap ? 2 * a->cap : 16;
        char **v = realloc(a->v, sizeof *v * (size_t)cap);
        if (!v)
            return false;
        a->v = v;
        a->cap = cap;
    }
    char *copy = strdup(word);
    if (!copy)
        return false;
    a->v[a->n++] = copy;
    a->v[a->n] = NULL;
    return true;
}

bool cc_argv_append(cc_argv *a, const cc_argv *words)
{
    for (int i = 0; i < words->n; i++)
        if (!cc_argv_push(a, words->v[i]))
            return false;
    return true;
}

void cc_argv_free(cc_argv *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

/* ---- shell-like word splitting -------------------------------------------------------------------- */

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

/* Copies one quoted stretch starting after its opening quote q; returns the
 * position after the closing quote, or NULL if there is none. Inside
 * double quotes a backslash escapes only " \ $ ` and newline, as in sh. */
static const char *quoted(const char *p, char q, char *w, size_t *n)
{
    for (; *p && *p != q; p++) {
        if (q == '"' && *p == '\\' && p[1] && strchr("\"\\$`\n", p[1])) {
            p++;
            if (*p == '\n') /* line continuation */
                continue;
        }
        w[(*n)++] = *p;
    }
    return *p ? p + 1 : NULL;
}

bool cc_split_words(const char *text, const char *what, cc_argv *out, char *why, size_t cap)
{
    char *w = malloc(strlen(text) + 1); /* no word is longer than the text */
    if (!w) {
        cc_format(why, cap, "out of memory");
        return false;
    }
    bool ok = true;
    const char *p = text;
    while (ok) {
        while (is_blank(*p))
            p++;
        if (!*p)
            break;
        size_t n = 0;
        while (ok && *p && !is_blank(*p)) {
            char c = *p++;
            if (c == '\'' || c == '"') {
                p = quoted(p, c, w, &n);
                if (!p) {
                    cc_format(why, cap, "%s has an unterminated %s quote: %.200s", what,
                              c == '\'' ? "single" : "double", text);
                    ok = false;
                }
            } else if (c == '\\' && *p) {
                c = *p++;
                if (c != '\n') /* line continuation */
                    w[n++] = c;
            } else {
                w[n++] = c;
            }
        }
        w[n] = '\0';
        if (ok && !cc_argv_push(out, w)) {
            cc_format(why, cap, "out of memory");
            ok = false;
        }
    }
    free(w);
    return ok;
}

/* ---- processes -------------------------------------------------------------------------------------- */

double cc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Sends fd `target` of the child to fd, or to /dev/null when fd < 0. */
static int route(posix_spawn_file_actions_t *fa, int target, int fd)
{
    if (fd >= 0)
        return posix_spawn_file_actions_adddup2(fa, fd, target);
    return posix_spawn_file_actions_addopen(fa, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0);
}

pid_t cc_spawn(char *const argv[], int dir_fd, int out_fd, int err_fd)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return -1;
    if (posix_spawnattr_init(&attr) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    /* a group of its own, so that a timeout kills cc1, as and ld too */
    int rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    rc = rc ? rc : posix_spawnattr_setpgroup(&attr, 0);
    rc = rc ? rc : route(&fa, STDIN_FILENO, -1);
    rc = rc ? rc : route(&fa, STDOUT_FILENO, out_fd);
    rc = rc ? rc : route(&fa, STDERR_FILENO, err_fd);
    if (!rc && dir_fd >= 0)
        rc = posix_spawn_file_actions_addfchdir_np(&fa, dir_fd);
    pid_t pid = -1;
    if (!rc)
        rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        errno = rc;
        return -1;
    }
    return pid;
}

static int exit_status(int raw) { return WIFEXITED(raw) ? WEXITSTATUS(raw) : CC_EXIT_FAILED; }

/* Kills pid's process group (and pid itself, should it have left the
 * group) and reaps pid. */
static void kill_and_reap(pid_t pid)
{
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    int raw;
    while (waitpid(pid, &raw, 0) < 0 && errno == EINTR)
        ;
}

void cc_wait(const pid_t *pid, int n, double deadline, int *status)
{
    bool done[4] = {false};
    int running = 0;
    n = n < 4 ? n : 4;
    for (int i = 0; i < n; i++) {
        done[i] = pid[i] <= 0;
        status[i] = CC_EXIT_FAILED;
        running += !done[i];
    }
    long nap_ns = 500000; /* polls often at first: most runs are short */
    while (running > 0) {
        for (int i = 0; i < n; i++) {
            if (done[i])
                continue;
            int raw;
            pid_t r = waitpid(pid[i], &raw, WNOHANG);
            if (r == pid[i] || (r < 0 && errno != EINTR)) {
                status[i] = r == pid[i] ? exit_status(raw) : CC_EXIT_FAILED;
                done[i] = true;
                running--;
            }
        }
        if (running == 0)
            break;
        if (cc_now() >= deadline) {
            for (int i = 0; i < n; i++)
                if (!done[i]) {
                    kill_and_reap(pid[i]);
                    status[i] = CC_EXIT_TIMED_OUT;
                }
            break;
        }
        struct timespec nap = {0, nap_ns};
        nanosleep(&nap, NULL);
        nap_ns = nap_ns < 4000000 ? nap_ns * 2 : nap_ns; /* the next job starts at most 4 ms late */
    }
}

/* A finished process's status if pid ended (true), else false. */
static bool reap_if_done(pid_t pid, int *status)
{
    int raw;
    pid_t r = waitpid(pid, &raw, WNOHANG);
    if (r == pid) {
        *status = exit_status(raw);
        return true;
    }
    if (r < 0 && errno != EINTR) {
        *status = CC_EXIT_FAILED;
        return true;
    }
    return false;
}

int cc_wait_one(const pid_t *pid, int n, const double *deadline, bool *done, int *status)
{
    long nap_ns = 500000; /* polls often at first: most runs are short */
    for (;;) {
        bool any = false;
        double now = cc_now();
        for (int i = 0; i < n; i++) {
            if (done[i] || pid[i] <= 0)
                continue;
            any = true;
            if (reap_if_done(pid[i], &status[i])) {
                done[i] = true;
                return i;
            }
            if (now >= deadline[i]) {
                kill_and_reap(pid[i]);
                status[i] = CC_EXIT_TIMED_OUT;
                done[i] = true;
                return i;
            }
        }
        if (!any)
            return -1;
        struct timespec nap = {0, nap_ns};
        nanosleep(&nap, NULL);
        nap_ns = nap_ns < 4000000 ? nap_ns * 2 : nap_ns; /* the next job starts at most 4 ms late */
    }
}
