/*
 * cc.c - building generated C into shared objects.
 *
 * The toolchain (LT_CC, LT_CFLAGS) is identified once per process by the
 * output of `cc --version` plus the flags. A program's cache key is a
 * 128-bit hash of a version stamp, that identity (with LT_CFLAGS_COLD) and
 * the source text, so a new compiler, new flags or a new code generator
 * never reuse old objects. A large program comes as several translation
 * units (see render.c): they are compiled to objects by concurrent
 * compiler processes (`cc -c`, at most LT_CC_JOBS at a time, so that a
 * program of 8 units on 2 cores runs 2 by 2) and linked into one object;
 * the key covers every unit's bytes, bounds and flags.
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

#define CC_STAMP "lazytensor-cc-3"
#define LOG_EXCERPT 560
#define DEFAULT_TIMEOUT_S 120.0

static pthread_mutex_t cc_lock = PTHREAD_MUTEX_INITIALIZER;
static bool cc_checked, cc_ok;
/* cc_ok for readers that must not wait for cc_lock, which a build holds for
 * its whole compiler run: set (release) once the toolchain, cc_id and the
 * cache directory are known, cleared when a run times out. */
static atomic_bool cc_usable;
static char cc_why[512];
static char cc_cmd[512], cc_flags[1024], cc_tier_flags[LT_CC_TIERS][256]; /* as given, for messages */
static cc_argv cc_words, flag_words, tier_words[LT_CC_TIERS];             /* as run; none for hot */
static int cc_jobs = 1;
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

/* LT_CC_JOBS: compiler processes at once (default: the online CPUs), 1 ..
 * LT_CC_MAX_UNITS. */
static int jobs_setting(void)
{
    const char *env = getenv("LT_CC_JOBS");
    long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > LT_CC_MAX_UNITS ? LT_CC_MAX_UNITS : (int)n;
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

static lt_status build_locked(const char *src, const lt_cc_unit *units, int nunits, void **handle, void **entry,
                              char *key_hex, bool count);

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
    const char *cc = getenv("LT_CC"), *flags = getenv("LT_CFLAGS"), *cold = getenv("LT_CFLAGS_COLD");
    const char *warm = getenv("LT_CFLAGS_WARM");
    cc_format(cc_cmd, sizeof cc_cmd, "%s", cc && *cc ? cc : "cc");
    cc_format(cc_flags, sizeof cc_flags, "%s", flags ? flags : LT_CC_DEFAULT_FLAGS);
    cc_format(cc_tier_flags[LT_CC_COLD], sizeof cc_tier_flags[0], "%s", cold ? cold : LT_CC_DEFAULT_COLD_FLAGS);
    cc_format(cc_tier_flags[LT_CC_WARM], sizeof cc_tier_flags[0], "%s", warm ? warm : LT_CC_DEFAULT_WARM_FLAGS);
    cc_timeout = timeout_setting();
    cc_jobs = jobs_setting();
    if (!cc_split_words(cc_cmd, "LT_CC", &cc_words, cc_why, sizeof cc_why) ||
        !cc_split_words(cc_flags, "LT_CFLAGS", &flag_words, cc_why, sizeof cc_why) ||
        !cc_split_words(cc_tier_flags[LT_CC_COLD], "LT_CFLAGS_COLD", &tier_words[LT_CC_COLD], cc_why,
                        sizeof cc_why) ||
        !cc_split_words(cc_tier_flags[LT_CC_WARM], "LT_CFLAGS_WARM", &tier_words[LT_CC_WARM], cc_why,
                        sizeof cc_why))
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
    hash_str(cc_id, "\ncold: ");
    hash_str(cc_id, cc_tier_flags[LT_CC_COLD]);
    hash_str(cc_id, "\nwarm: ");
    hash_str(cc_id, cc_tier_flags[LT_CC_WARM]);
    if (!cache_locked()) {
        cc_format(cc_why, sizeof cc_why, "no directory to build programs in (LT_CACHE_DIR, TMPDIR)");
        return;
    }
    void *h = NULL, *e = NULL;
    char key[33];
    const lt_cc_unit probe = {0, sizeof probe_source - 1, false};
    if (build_locked(probe_source, &probe, 1, &h, &e, key, false) != LT_OK) {
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
    const lt_cc_unit *unit; /* [units] */
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
    const char *extra = u >= 0 ? cc_tier_flags[b->unit[u].tier] : "";
    return lt_error(LT_ERR_UNSUPPORTED, "cpu compiler: `%s %s%s%s` failed (exit %d); source kept at %s; log:\n%s",
                    cc_cmd, cc_flags, *extra ? " " : "", extra, status, kept, excerpt);
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

/* One compiler run of a build step: its arguments after the flags, its
 * log, the unit whose source it compiles (-1: the link) and that unit's
 * tier (a warm or cold unit's flags follow LT_CFLAGS, so their -O wins). */
typedef struct cc_job {
    const char *args[LT_CC_MAX_UNITS + 4]; /* after the flags, NULL-terminated */
    char log[32];
    int unit;
    lt_cc_tier tier;
} cc_job;

/* Starts `cc flags [tier flags] <args...>` with its output in the new
 * file job->log; returns its pid (-1: could not start, error set). */
static pid_t start_compiler(const build *b, const cc_job *job)
{
    cc_argv argv = {0};
    bool ok = cc_argv_append(&argv, &cc_words) && cc_argv_append(&argv, &flag_words) &&
              cc_argv_append(&argv, &tier_words[job->tier]);
    for (int i = 0; ok && job->args[i]; i++)
        ok = cc_argv_push(&argv, job->args[i]);
    pid_t pid = -1;
    int log_fd = ok ? cc_create_file(b->fd, job->log) : -1;
    if (!ok)
        lt_error(LT_ERR_MEMORY, "cpu compiler: out of memory");
    else if (log_fd < 0)
        lt_error(LT_ERR_IO, "cpu compiler: cannot create %s/%s/%s: %s", cache.path, b->dir, job->log, strerror(errno));
    else if ((pid = cc_spawn(argv.v, b->fd, log_fd, log_fd)) < 0)
        lt_error(LT_ERR_UNSUPPORTED, "cpu compiler: cannot run `%s`: %s", cc_cmd, strerror(errno));
    if (log_fd >= 0)
        close(log_fd);
    cc_argv_free(&argv);
    return pid;
}

/* Runs the n jobs, at most cc_jobs at once, each with LT_CC_TIMEOUT from
 * its start. The first failure stops the step: nothing more is started,
 * and what still runs is killed and reaped. */
static lt_status run_step(const build *b, int n, const cc_job *jobs)
{
    pid_t pid[LT_CC_MAX_UNITS];
    int status[LT_CC_MAX_UNITS];
    double deadline[LT_CC_MAX_UNITS];
    bool done[LT_CC_MAX_UNITS];
    int started = 0, running = 0;
    lt_status st = LT_OK;
    for (;;) {
        while (st == LT_OK && started < n && running < cc_jobs) {
            done[started] = false;
            deadline[started] = cc_now() + cc_timeout;
            pid[started] = start_compiler(b, &jobs[started]);
            if (pid[started] < 0) {
                done[started] = true;
                st = lt_last_status();
            }
            running += pid[started++] >= 0;
        }
        if (st != LT_OK)
            for (int k = 0; k < started; k++)
                deadline[k] = 0; /* a failure: kill what still runs */
        if (running == 0)
            break;
        int i = cc_wait_one(pid, started, deadline, done, status);
        if (i < 0)
            break;
        running--;
        if (st != LT_OK)
            continue; /* already failed: reaping the rest */
        if (status[i] == CC_EXIT_TIMED_OUT)
            st = build_timed_out();
        else if (status[i] != 0)
            st = build_failed(b, jobs[i].unit, jobs[i].log, status[i]);
    }
    return st;
}

static cc_job unit_job(int u, lt_cc_tier tier, const char *out, const char *in, bool object)
{
    cc_job job = {.unit = u, .tier = tier};
    int a = 0;
    if (object)
        job.args[a++] = "-c";
    job.args[a++] = "-o";
    job.args[a++] = out;
    job.args[a++] = in;
    if (!object)
        job.args[a++] = "-lm";
    job.args[a] = NULL;
    unit_file(u, "log", job.log, sizeof job.log);
    return job;
}

/* Builds program.so from the sources: one unit in one compiler run;
 * several compiled to objects by concurrent runs, then linked. */
static lt_status run_compiler(const build *b)
{
    static const char *const sources[LT_CC_MAX_UNITS] = {"unit1.c", "unit2.c", "unit3.c", "unit4.c",
                                                         "unit5.c", "unit6.c", "unit7.c", "unit8.c"};
    static const char *const objects[LT_CC_MAX_UNITS] = {"unit1.o", "unit2.o", "unit3.o", "unit4.o",
                                                         "unit5.o", "unit6.o", "unit7.o", "unit8.o"};
    if (b->units == 1) {
        cc_job job = unit_job(0, b->unit[0].tier, "program.so", sources[0], false);
        return run_step(b, 1, &job);
    }
    /* The last unit starts first: it holds the entry point on top of its
     * share of the kernels, so it is usually the longest compile, and a
     * long job started last would leave the other processes idle. */
    cc_job jobs[LT_CC_MAX_UNITS];
    for (int k = 0; k < b->units; k++) {
        int u = k == 0 ? b->units - 1 : k - 1;
        jobs[k] = unit_job(u, b->unit[u].tier, objects[u], sources[u], true);
    }
    lt_status st = run_step(b, b->units, jobs);
    if (st != LT_OK)
        return st;
    cc_job link = {.args = {"-o", "program.so"}, .log = "link.log", .unit = -1};
    int a = 2;
    for (int u = 0; u < b->units; u++)
        link.args[a++] = objects[u];
    link.args[a++] = "-lm";
    link.args[a] = NULL;
    return run_step(b, 1, &link);
}

static lt_status write_sources(const build *b, const char *src)
{
    for (int u = 0; u < b->units; u++) {
        char name[32];
        int fd = cc_create_file(b->fd, unit_file(u, "c", name, sizeof name));
        bool ok = fd >= 0 && cc_write_all(fd, src + b->unit[u].begin, b->unit[u].end - b->unit[u].begin);
        int err = errno;
        if (fd >= 0 && close(fd) != 0)
            ok = false;
        if (!ok)
            return lt_error(LT_ERR_IO, "cpu compiler: cannot write %s in %s/%s: %s", name, cache.path, b->dir,
                            strerror(err));
    }
    return LT_OK;
}

/* Compiles src's units into the cache as final_name; the caller holds
 * cc_lock. */
static lt_status compile_into_cache(const char *src, const lt_cc_unit *units, int nunits, const char *final_name,
                                    const char *stem, const uint64_t key[2])
{
    build b = {.units = nunits, .unit = units, .stem = stem};
    b.fd = cc_build_dir_make(&cache, b.dir);
    if (b.fd < 0)
        return lt_error(LT_ERR_IO, "cpu compiler: cannot create a build directory in %s: %s", cache.path,
                        strerror(errno));
    lt_status st = write_sources(&b, src);
    if (st == LT_OK)
        st = run_compiler(&b);
    if (st == LT_OK && !cc_cache_store(&cache, b.fd, "program.so", final_name, key))
        st = lt_error(LT_ERR_IO, "cpu compiler: cannot store %s/%s: %s", cache.path, final_name, strerror(errno));
    cc_build_dir_remove(&cache, b.dir, b.fd);
    return st;
}

/* The cache key of a program: the toolchain's identity, then every unit's
 * bytes, bounds and flags; in hex (stem) and as its file name in the cache
 * (name). */
static void program_key(const char *src, const lt_cc_unit *units, int nunits, uint64_t key[2], char stem[40],
                        char name[48])
{
    key[0] = cc_id[0];
    key[1] = cc_id[1];
    lt_ir_hash_u64(key, (uint64_t)nunits);
    for (int u = 0; u < nunits; u++) {
        lt_ir_hash_u64(key, units[u].begin);
        lt_ir_hash_u64(key, units[u].end);
        lt_ir_hash_u64(key, (uint64_t)units[u].tier);
        cc_hash_bytes(key, src + units[u].begin, units[u].end - units[u].begin);
    }
    cc_format(stem, 40, "%016llx%016llx", (unsigned long long)key[0], (unsigned long long)key[1]);
    cc_format(name, 48, "%s.so", stem);
}

static lt_status build_locked(const char *src, const lt_cc_unit *units, int nunits, void **handle, void **entry,
                              char *key_hex, bool count)
{
    uint64_t key[2];
    char stem[40], name[48], why[256];
    program_key(src, units, nunits, key, stem, name);
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
        lt_status st = compile_into_cache(src, units, nunits, name, stem, key);
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

static bool units_valid(const lt_cc_unit *units, int nunits)
{
    if (!units || nunits < 1 || nunits > LT_CC_MAX_UNITS)
        return false;
    for (int u = 0; u < nunits; u++)
        if (units[u].begin > units[u].end)
            return false;
    return true;
}

lt_status lt_cc_load(const char *src, const lt_cc_unit *units, int nunits, void **handle, void **entry,
                     char *key_hex)
{
    char why[512];
    if (!src || !units_valid(units, nunits))
        return lt_error(LT_ERR_ARGUMENT, "cpu compiler: bad translation units");
    if (!lt_cc_available(why, sizeof why))
        return lt_error(LT_ERR_UNSUPPORTED, "cpu compiler: no working C compiler: %s", why);
    pthread_mutex_lock(&cc_lock);
    lt_status st;
    if (!cc_ok) /* the compiler timed out since the check above */
        st = lt_error(LT_ERR_UNSUPPORTED, "cpu compiler: no working C compiler: %s", cc_why);
    else
        st = build_locked(src, units, nunits, handle, entry, key_hex, true);
    pthread_mutex_unlock(&cc_lock);
    return st;
}

void lt_cc_unload(void *handle)
{
    if (handle)
        dlclose(handle);
}

/* Loads the cached object `name` of `key`: the part of a lookup that
 * needs no cc_lock. */
static bool load_cached(const uint64_t key[2], const char *name, void **handle, void **entry)
{
    char why[256];
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
    *handle = h;
    *entry = e;
    return true;
}

/* Reads only what never changes once cc_usable is set (cc_id, the cache
 * directory), so it needs no cc_lock and never waits behind a build on
 * another thread; files are replaced atomically, so a concurrent build or
 * eviction can only make it miss. */
bool lt_cc_lookup(const char *src, const lt_cc_unit *units, int nunits, void **handle, void **entry,
                  char *key_hex)
{
    if (!src || !units_valid(units, nunits) || !atomic_load_explicit(&cc_usable, memory_order_acquire))
        return false;
    uint64_t key[2];
    char stem[40], name[48];
    program_key(src, units, nunits, key, stem, name);
    if (!load_cached(key, name, handle, entry))
        return false;
    memcpy(key_hex, stem, 33);
    return true;
}

bool cc_lookup_object(const uint64_t key[2], void **handle, void **entry)
{
    if (!atomic_load_explicit(&cc_usable, memory_order_acquire))
        return false;
    char stem[40], name[48];
    cc_format(stem, sizeof stem, "%016llx%016llx", (unsigned long long)key[0], (unsigned long long)key[1]);
    cc_format(name, sizeof name, "%s.so", stem);
    return load_cached(key, name, handle, entry);
}

const cc_dir *cc_usable_dir(uint64_t id[2])
{
    if (!atomic_load_explicit(&cc_usable, memory_order_acquire))
        return NULL;
    id[0] = cc_id[0];
    id[1] = cc_id[1];
    return &cache;
}
