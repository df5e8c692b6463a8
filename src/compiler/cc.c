/*
 * cc.c - building generated C into shared objects.
 *
 * The toolchain (LT_CC, LT_CFLAGS) is identified once per process by the
 * output of `cc --version` plus the flags. A program's cache key is a
 * 128-bit hash of a version stamp, that identity and the source text, so a
 * new compiler, new flags or a new code generator never reuse old objects.
 * A large program comes as two translation units (see render.c): both are
 * compiled at once (`cc -c`, two processes) and linked into one object;
 * the key covers both units and where they split.
 *
 * No string from the environment reaches a shell: LT_CC and LT_CFLAGS are
 * split into words (cc_run.c) and the compiler is started directly, in a
 * build directory of its own (cc_cache.c), with its output going to a log
 * file. Every run has a deadline (LT_CC_TIMEOUT): a compiler that hangs is
 * killed, and from then on this process builds nothing more (lt_cc_available
 * turns false), so graphs fall back to the interp backend instead of each
 * waiting for the deadline again.
 */
#include "compiler/cc_internal.h"
#include "lazy/lazy.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CC_STAMP "lazytensor-cc-2"
#define LOG_EXCERPT 560
#define DEFAULT_TIMEOUT_S 120.0

static pthread_mutex_t cc_lock = PTHREAD_MUTEX_INITIALIZER;
static bool cc_checked, cc_ok;
/* cc_ok for readers that must not wait for cc_lock, which a build holds for
 * its whole compiler run: set (release) once the toolchain, cc_id and the
 * cache directory are known, cleared when a run times out. */
static atomic_bool cc_usable;
static char cc_why[512];
static char cc_cmd[512], cc_flags[1024]; /* as given, for messages */
static cc_argv cc_words, flag_words;    /* as run */
static uint64_t cc_id[2];
static double cc_timeout = DEFAULT_TIMEOUT_S;
static cc_dir cache = {-1, false, ""};
static bool cache_tried;

bool cc_format(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < cap;
}

static void hash_str(uint64_t h[2], const char *s) { cc_hash_bytes(h, s, strlen(s)); }

/* LT_CC_TIMEOUT: seconds (default 120). */
static double timeout_setting(void)
{
    const char *env = getenv("LT_CC_TIMEOUT");
    char *end = NULL;
    double s = env ? strtod(env, &end) : 0;
    if (!env || end == env || !isfinite(s) || s <= 0)
        return DEFAULT_TIMEOUT_S;
    return s < 1e6 ? s : 1e6;
}

/* ---- the cache directory --------------------------------------------------------------------------- */

/* Opens it on first use; the caller holds cc_lock. */
static const cc_dir *cache_locked(void)
{
    if (!cache_tried) {
        cache_tried = true;
        char why[256];
        if (!cc_dir_open(&cache, why, sizeof why))
            cache.fd = -1;
    }
    return cache.fd >= 0 ? &cache : NULL;
}

const char *lt_cc_cache_dir(void)
{
    pthread_mutex_lock(&cc_lock);
    const cc_dir *d = cache_locked();
    pthread_mutex_unlock(&cc_lock);
    return d ? d->path : NULL;
}

/* ---- the toolchain ------------------------------------------------------------------------------------ */

static lt_status build_locked(const char *src, size_t len, size_t split, void **handle, void **entry, char *key_hex,
                              bool count);

static const char probe_source[] =
    "#include <math.h>\n"
    "int lt_program_entry(void *const *B, const double *S, const void *rt)\n"
    "{\n"
    "    double s = 0;\n"
    "#pragma omp simd reduction(+:s)\n"
    "    for (int i = 0; i < 64; i++)\n"
    "        s += sqrt((double)i);\n"
    "    (void)B, (void)S, (void)rt;\n"
    "    return s > 0 ? 0 : 1;\n"
    "}\n";

/* Reads the pipe fd until its end or the deadline, keeping what fits in out. */
static size_t read_until(int fd, char *out, size_t cap, double deadline)
{
    size_t n = 0;
    for (;;) {
        double left = deadline - cc_now();
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) == 0)
            break;
        char buf[4096];
        ssize_t got = read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t keep = (size_t)got < cap - 1 - n ? (size_t)got : cap - 1 - n; /* the rest is drained */
        memcpy(out + n, buf, keep);
        n += keep;
    }
    out[n] = '\0';
    return n;
}

/* `cc --version` into out; false with cc_why set if it fails. */
static bool compiler_version(char *out, size_t cap)
{
    cc_argv argv = {0};
    int fds[2] = {-1, -1};
    bool ok = cc_argv_append(&argv, &cc_words) && cc_argv_push(&argv, "--version") && pipe2(fds, O_CLOEXEC) == 0;
    pid_t pid = ok ? cc_spawn(argv.v, -1, fds[1], -1) : -1;
    int err = errno;
    if (fds[1] >= 0)
        close(fds[1]);
    int status = CC_EXIT_FAILED;
    size_t n = 0;
    if (pid > 0) {
        double deadline = cc_now() + cc_timeout;
        n = read_until(fds[0], out, cap, deadline);
        cc_wait(&pid, 1, deadline, &status);
    }
    if (fds[0] >= 0)
        close(fds[0]);
    cc_argv_free(&argv);
    if (pid <= 0)
        cc_format(cc_why, sizeof cc_why, "cannot run `%s`: %s (set LT_CC to a working C compiler)", cc_cmd,
                  strerror(err));
    else if (status == CC_EXIT_TIMED_OUT)
        cc_format(cc_why, sizeof cc_why, "`%s --version` did not finish within %g s (LT_CC_TIMEOUT) and was killed",
                  cc_cmd, cc_timeout);
    else if (status != 0 || n == 0)
        cc_format(cc_why, sizeof cc_why, "`%s --version` failed (set LT_CC to a working C compiler)", cc_cmd);
    return pid > 0 && status == 0 && n > 0;
}

/* LT_CC and LT_CFLAGS as words; false with cc_why set on a bad quote. */
static bool read_settings(void)
{
    const char *cc = getenv("LT_CC"), *flags = getenv("LT_CFLAGS");
    cc_format(cc_cmd, sizeof cc_cmd, "%s", cc && *cc ? cc : "cc");
    cc_format(cc_flags, sizeof cc_flags, "%s", flags ? flags : LT_CC_DEFAULT_FLAGS);
    cc_timeout = timeout_setting();
    if (!cc_split_words(cc_cmd, "LT_CC", &cc_words, cc_why, sizeof cc_why) ||
        !cc_split_words(cc_flags, "LT_CFLAGS", &flag_words, cc_why, sizeof cc_why))
        return false;
    if (cc_words.n == 0)
        cc_format(cc_why, sizeof cc_why, "LT_CC names no command");
    return cc_words.n > 0;
}

/* Identifies the toolchain and builds the probe once. */
static void check_toolchain(void)
{
    cc_checked = true;
    char out[4096];
    if (!read_settings() || !compiler_version(out, sizeof out))
        return;
    lt_ir_hash_init(cc_id);
    hash_str(cc_id, CC_STAMP);
    hash_str(cc_id, out);
    hash_str(cc_id, cc_flags);
    if (!cache_locked()) {
        cc_format(cc_why, sizeof cc_why, "no directory to build programs in (LT_CACHE_DIR, TMPDIR)");
        return;
    }
    void *h = NULL, *e = NULL;
    char key[33];
    if (build_locked(probe_source, sizeof probe_source - 1, 0, &h, &e, key, false) != LT_OK) {
        cc_format(cc_why, sizeof cc_why, "`%s %s` cannot build a test program: %.300s", cc_cmd, cc_flags,
                  lt_last_error());
        lt_clear_error();
        return;
    }
    dlclose(h);
    cc_ok = true;
    atomic_store_explicit(&cc_usable, true, memory_order_release);
}

bool lt_cc_available(char *why, size_t cap)
{
    if (atomic_load_explicit(&cc_usable, memory_order_acquire))
        return true; /* without waiting for a build in progress */
    pthread_mutex_lock(&cc_lock);
    if (!cc_checked)
        check_toolchain();
    bool ok = cc_ok;
    if (!ok && why && cap)
        cc_format(why, cap, "%s", cc_why);
    pthread_mutex_unlock(&cc_lock);
    return ok;
}

/* ---- one build ------------------------------------------------------------------------------------------ */

/* A build in its own directory: per unit its source, object and log. */
typedef struct build {
    int fd;                 /* the build directory */
    char dir[32];           /* its name in the cache */
    int units;
    const char *stem;       /* the cache key in hex */
} build;

static const char *unit_file(int u, const char *ext, char *buf, size_t cap)
{
    cc_format(buf, cap, "unit%d.%s", u + 1, ext);
    return buf;
}

/* The compiler's log for an error message: its first lines. */
static void log_excerpt(const build *b, const char *log, char *out, size_t cap)
{
    size_t len = 0;
    char *text = (char *)cc_read_file_at(b->fd, log, 65536, &len);
    cc_format(out, cap, "%s", text && len ? text : "(no output)");
    if (text && len >= cap && cap > 4)
        memcpy(out + cap - 5, "...\n", 5);
    free(text);
}

/* Reports a failed compiler run: keeps the source of unit u (u < 0: the
 * link step, no source) and the log in the cache directory. */
static lt_status build_failed(const build *b, int u, const char *log, int status)
{
    char kept[1400] = "(none: the link failed)", kept_name[128], excerpt[LOG_EXCERPT], src[32];
    if (u >= 0) {
        if (b->units == 1)
            cc_format(kept_name, sizeof kept_name, "%s.failed.c", b->stem);
        else
            cc_format(kept_name, sizeof kept_name, "%s-part%d.failed.c", b->stem, u + 1);
        if (renameat(b->fd, unit_file(u, "c", src, sizeof src), cache.fd, kept_name) == 0)
            cc_format(kept, sizeof kept, "%s/%s", cache.path, kept_name);
        else
            cc_format(kept, sizeof kept, "(none: %s)", strerror(errno));
    }
    log_excerpt(b, log, excerpt, sizeof excerpt);
    cc_format(kept_name, sizeof kept_name, "%s.failed.log", b->stem);
    renameat(b->fd, log, cache.fd, kept_name);
    lt_metric_add("CompileErrors", 1);
    return lt_error(LT_ERR_UNSUPPORTED, "cpu compiler: `%s %s` failed (exit %d); source kept at %s; log:\n%s", cc_cmd,
                    cc_flags, status, kept, excerpt);
}

/* A compiler run that hit LT_CC_TIMEOUT: this process stops compiling
 * (warned once) and the graph goes to interp (src/backend/cpu.c). */
static lt_status build_timed_out(void)
{
    if (cc_ok) {
        fprintf(stderr,
                "lazytensor: warning: the C compiler `%s` did not finish within %g s (LT_CC_TIMEOUT) and was "
                "killed; from now on this process runs lazy graphs with the interp backend\n",
                cc_cmd, cc_timeout);
        cc_ok = false;
        atomic_store(&cc_usable, false);
    }
    cc_format(cc_why, sizeof cc_why, "`%s` did not finish within %g s (LT_CC_TIMEOUT) and was killed", cc_cmd,
              cc_timeout);
    return lt_error(LT_ERR_UNSUPPORTED, "cpu compiler: `%s %s` did not finish within %g s (LT_CC_TIMEOUT); killed",
                    cc_cmd, cc_flags, cc_timeout);
}

/* Starts `cc flags <args...>` with its output in the new file log;
 * returns its pid (-1: could not start, error set). */
static pid_t start_compiler(const build *b, const char *log, const char *const *args)
{
    cc_argv argv = {0};
    bool ok = cc_argv_append(&argv, &cc_words) && cc_argv_append(&argv, &flag_words);
    for (int i = 0; ok && args[i]; i++)
        ok = cc_argv_push(&argv, args[i]);
    pid_t pid = -1;
    int log_fd = ok ? cc_create_file(b->fd, log) : -1;
    if (!ok)
        lt_error(LT_ERR_MEMORY, "cpu compiler: out of memory");
    else if (log_fd < 0)
        lt_error(LT_ERR_IO, "cpu compiler: cannot create %s/%s/%s: %s", cache.path, b->dir, log, strerror(errno));
    else if ((pid = cc_spawn(argv.v, b->fd, log_fd, log_fd)) < 0)
        lt_error(LT_ERR_UNSUPPORTED, "cpu compiler: cannot run `%s`: %s", cc_cmd, strerror(errno));
    if (log_fd >= 0)
        close(log_fd);
    cc_argv_free(&argv);
    return pid;
}

/* Runs the compiler on every unit at once (each unit u: args[u]), then
 * checks the outcomes. */
static lt_status run_step(const build *b, int n, const char *const *const *args, const char *const *logs,
                          const int *unit)
{
    pid_t pid[2] = {-1, -1};
    int status[2];
    lt_status st = LT_OK;
    for (int i = 0; i < n && st == LT_OK; i++) {
        pid[i] = start_compiler(b, logs[i], args[i]);
        if (pid[i] < 0)
            st = lt_last_status();
    }
    /* reaps (killing it at once) what started before a failure */
    cc_wait(pid, n, st == LT_OK ? cc_now() + cc_timeout : 0, status);
    if (st != LT_OK)
        return st;
    for (int i = 0; i < n; i++)
        if (status[i] == CC_EXIT_TIMED_OUT)
            return build_timed_out();
    for (int i = 0; i < n; i++)
        if (status[i] != 0)
            return build_failed(b, unit[i], logs[i], status[i]);
    return LT_OK;
}

/* Builds program.so from the sources: one unit in one compiler run; two
 * units compiled to objects by two concurrent runs, then linked. */
static lt_status run_compiler(const build *b)
{
    if (b->units == 1) {
        const char *args[] = {"-o", "program.so", "unit1.c", "-lm", NULL};
        const char *const *all[] = {args};
        const char *logs[] = {"unit1.log"};
        return run_step(b, 1, all, logs, (int[]){0});
    }
    const char *a1[] = {"-c", "-o", "unit1.o", "unit1.c", NULL}, *a2[] = {"-c", "-o", "unit2.o", "unit2.c", NULL};
    const char *const *units[] = {a1, a2};
    const char *logs[] = {"unit1.log", "unit2.log"};
    lt_status st = run_step(b, 2, units, logs, (int[]){0, 1});
    if (st != LT_OK)
        return st;
    const char *link[] = {"-o", "program.so", "unit1.o", "unit2.o", "-lm", NULL};
    const char *const *all[] = {link};
    const char *link_log[] = {"link.log"};
    return run_step(b, 1, all, link_log, (int[]){-1});
}

static lt_status write_sources(const build *b, const char *src, size_t len, size_t split)
{
    size_t begin[2] = {0, split}, end[2] = {split ? split : len, len};
    for (int u = 0; u < b->units; u++) {
        char name[32];
        int fd = cc_create_file(b->fd, unit_file(u, "c", name, sizeof name));
        bool ok = fd >= 0 && cc_write_all(fd, src + begin[u], end[u] - begin[u]);
        int err = errno;
        if (fd >= 0 && close(fd) != 0)
            ok = false;
        if (!ok)
            return lt_error(LT_ERR_IO, "cpu compiler: cannot write %s in %s/%s: %s", name, cache.path, b->dir,
                            strerror(err));
    }
    return LT_OK;
}

/* Compiles src (split > 0: two units, see lt_cc_load) into the cache as
 * final_name; the caller holds cc_lock. */
static lt_status compile_into_cache(const char *src, size_t len, size_t split, const char *final_name,
                                    const char *stem, const uint64_t key[2])
{
    build b = {.units = split ? 2 : 1, .stem = stem};
    b.fd = cc_build_dir_make(&cache, b.dir);
    if (b.fd < 0)
        return lt_error(LT_ERR_IO, "cpu compiler: cannot create a build directory in %s: %s", cache.path,
                        strerror(errno));
    lt_status st = write_sources(&b, src, len, split);
    if (st == LT_OK)
        st = run_compiler(&b);
    if (st == LT_OK && !cc_cache_store(&cache, b.fd, "program.so", final_name, key))
        st = lt_error(LT_ERR_IO, "cpu compiler: cannot store %s/%s: %s", cache.path, final_name, strerror(errno));
    cc_build_dir_remove(&cache, b.dir, b.fd);
    return st;
}

/* The cache key of a program (see the top of this file), in hex (stem) and
 * as its file name in the cache (name). */
static void program_key(const char *src, size_t len, size_t split, uint64_t key[2], char stem[40], char name[48])
{
    key[0] = cc_id[0];
    key[1] = cc_id[1];
    cc_hash_bytes(key, src, len);
    lt_ir_hash_u64(key, split);
    cc_format(stem, 40, "%016llx%016llx", (unsigned long long)key[0], (unsigned long long)key[1]);
    cc_format(name, 48, "%s.so", stem);
}

static lt_status build_locked(const char *src, size_t len, size_t split, void **handle, void **entry, char *key_hex,
                              bool count)
{
    uint64_t key[2];
    char stem[40], name[48], why[256];
    program_key(src, len, split, key, stem, name);
    memcpy(key_hex, stem, 33);
    bool corrupt;
    void *h = cc_cache_load(&cache, name, key, &corrupt, why, sizeof why);
    if (corrupt && count)
        lt_metric_add("DiskCacheCorrupt", 1);
    if (h) {
        if (count)
            lt_metric_add("DiskCacheHit", 1);
    } else {
        if (count)
            lt_metric_add("DiskCacheMiss", 1);
        lt_status st = compile_into_cache(src, len, split, name, stem, key);
        if (st != LT_OK)
            return st;
        h = cc_cache_load(&cache, name, key, &corrupt, why, sizeof why);
        if (!h)
            return lt_error(LT_ERR_IO, "cpu compiler: cannot load %s/%s: %s", cache.path, name, why);
        cc_cache_evict(&cache, name, fmax(600, 2 * cc_timeout));
    }
    void *e = dlsym(h, "lt_program_entry");
    if (!e) {
        dlclose(h);
        return lt_error(LT_ERR_STATE, "cpu compiler: %s/%s has no entry point", cache.path, name);
    }
    *handle = h;
    *entry = e;
    return LT_OK;
}

lt_status lt_cc_load(const char *src, size_t len, size_t split, void **handle, void **entry, char *key_hex)
{
    char why[512];
    if (!lt_cc_available(why, sizeof why))
        return lt_error(LT_ERR_UNSUPPORTED, "cpu compiler: no working C compiler: %s", why);
    pthread_mutex_lock(&cc_lock);
    lt_status st;
    if (!cc_ok) /* the compiler timed out since the check above */
        st = lt_error(LT_ERR_UNSUPPORTED, "cpu compiler: no working C compiler: %s", cc_why);
    else
        st = build_locked(src, len, split >= len ? 0 : split, handle, entry, key_hex, true);
    pthread_mutex_unlock(&cc_lock);
    return st;
}

void lt_cc_unload(void *handle)
{
    if (handle)
        dlclose(handle);
}

/* Reads only what never changes once cc_usable is set (cc_id, the cache
 * directory), so it needs no cc_lock and never waits behind a build on
 * another thread; files are replaced atomically, so a concurrent build or
 * eviction can only make it miss. */
bool lt_cc_lookup(const char *src, size_t len, size_t split, void **handle, void **entry, char *key_hex)
{
    if (!atomic_load_explicit(&cc_usable, memory_order_acquire))
        return false;
    uint64_t key[2];
    char stem[40], name[48], why[256];
    program_key(src, len, split >= len ? 0 : split, key, stem, name);
    bool corrupt;
    void *h = cc_cache_load(&cache, name, key, &corrupt, why, sizeof why);
    if (corrupt)
        lt_metric_add("DiskCacheCorrupt", 1);
    void *e = h ? dlsym(h, "lt_program_entry") : NULL;
    if (!e) {
        if (h)
            dlclose(h);
        return false;
    }
    lt_metric_add("DiskCacheHit", 1);
    memcpy(key_hex, stem, 33);
    *handle = h;
    *entry = e;
    return true;
}
