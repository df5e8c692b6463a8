/*
 * cc.c - building generated C into shared objects, and the disk cache.
 *
 * The toolchain (LT_CC, LT_CFLAGS) is identified once per process by the
 * output of `cc --version` plus the flags. A program's cache key is a
 * 128-bit hash of a version stamp, that identity and the source text, so a
 * new compiler, new flags or a new code generator never reuse old objects.
 * A large program comes as two translation units (see render.c): both are
 * compiled at once (`cc -c`, two processes) and linked into one object;
 * the key covers both units and where they split.
 *
 * Disk format: <dir>/<key>.so is the compiler's output followed by a
 * 48-byte trailer (magic, body length, checksum of the body, key). The
 * dynamic loader ignores bytes after the ELF data; a file whose trailer is
 * missing or does not match (truncated, corrupted, another key) is deleted
 * and rebuilt. Writes are atomic: the object is built under a temporary
 * name unique to this process, completed with its trailer, then renamed
 * over the final name, so concurrent processes building the same program
 * both succeed and readers never see a partial file. The directory is
 * bounded (LT_CACHE_MAX_MB): least recently used objects (by mtime, which
 * a hit refreshes) are evicted first.
 */
#include "compiler/compiler.h"
#include "lazy/lazy.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define CC_STAMP "lazytensor-cc-2"
#define TRAILER_MAGIC "LTSOv001"
#define LOG_EXCERPT 560

typedef struct trailer {
    char magic[8];
    uint64_t body_len;
    uint64_t sum[2];
    uint64_t key[2];
} trailer;

static pthread_mutex_t cc_lock = PTHREAD_MUTEX_INITIALIZER;
static bool cc_checked, cc_ok;
static char cc_why[512];
static char cc_cmd[512], cc_flags[1024];
static uint64_t cc_id[2];
static char cache_dir[1024];
static unsigned build_counter;

/* snprintf whose truncation is intended (messages, bounded paths). */
static bool format(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool format(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < cap;
}

/* ---- hashing -------------------------------------------------------------- */

static void hash_bytes(uint64_t h[2], const void *data, size_t n)
{
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        lt_ir_hash_u64(h, w);
    }
    uint64_t tail = 0;
    memcpy(&tail, p + i, n - i);
    lt_ir_hash_u64(h, tail ^ ((uint64_t)n << 56));
}

static void hash_str(uint64_t h[2], const char *s) { hash_bytes(h, s, strlen(s)); }

/* ---- small file helpers ------------------------------------------------------ */

/* mkdir -p */
static bool make_dirs(const char *path)
{
    char tmp[1024];
    format(tmp, sizeof tmp, "%s", path);
    for (char *s = tmp + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return false;
        *s = '/';
    }
    return mkdir(tmp, 0755) == 0 || errno == EEXIST;
}

static bool write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    bool ok = fwrite(data, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

/* The whole file (malloc'd, NUL-terminated), or NULL. */
static char *read_file(const char *path, size_t *len, size_t max)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (n == cap) {
            if (cap >= max)
                break;
            cap *= 2;
            char *b = realloc(buf, cap + 1);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* 'path' quoted for the shell. */
static void shell_quote(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    if (cap < 3)
        return;
    out[n++] = '\'';
    for (; *s && n + 6 < cap; s++) {
        if (*s == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *s;
        }
    }
    out[n++] = '\'';
    out[n] = '\0';
}

/* Starts cmd with /bin/sh; returns its process id, or -1. */
static pid_t spawn_shell(const char *cmd)
{
    char *argv[] = {"sh", "-c", (char *)cmd, NULL};
    pid_t pid;
    return posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) == 0 ? pid : -1;
}

/* The exit status of a process spawn_shell started (-1 if it failed). */
static int wait_shell(pid_t pid)
{
    if (pid < 0)
        return -1;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs cmd with /bin/sh; returns its exit status (-1 if it could not run). */
static int run_shell(const char *cmd) { return wait_shell(spawn_shell(cmd)); }

/* ---- toolchain ---------------------------------------------------------------- */

const char *lt_cc_cache_dir(void)
{
    if (cache_dir[0])
        return cache_dir;
    const char *env = getenv("LT_CACHE_DIR"), *home = getenv("HOME");
    if (env && *env)
        format(cache_dir, sizeof cache_dir, "%s", env);
    else if (home && *home)
        format(cache_dir, sizeof cache_dir, "%s/.cache/lazytensor", home);
    else
        format(cache_dir, sizeof cache_dir, "/tmp/lazytensor-cache-%d", (int)getuid());
    if (!make_dirs(cache_dir)) {
        cache_dir[0] = '\0';
        return NULL;
    }
    return cache_dir;
}

static lt_status build_locked(const char *src, size_t len, size_t split, void **handle, void **entry, char *key_hex,
                              bool count);

static const char probe_source[] =
    "#include <math.h>\n"
    "int lt_program_entry(void *const *B, const double *S, const void *rt)\n"
    "{\n"
    "    double s = 0;\n"
    "#pragma omp parallel for reduction(+:s)\n"
    "    for (int i = 0; i < 64; i++)\n"
    "        s += sqrt((double)i);\n"
    "    (void)B, (void)S, (void)rt;\n"
    "    return s > 0 ? 0 : 1;\n"
    "}\n";

/* Identifies the toolchain and builds the probe once. */
static void check_toolchain(void)
{
    cc_checked = true;
    const char *cc = getenv("LT_CC"), *flags = getenv("LT_CFLAGS");
    format(cc_cmd, sizeof cc_cmd, "%s", cc && *cc ? cc : "cc");
    format(cc_flags, sizeof cc_flags, "%s", flags ? flags : LT_CC_DEFAULT_FLAGS);
    char cmd[1200];
    format(cmd, sizeof cmd, "%s --version 2>/dev/null", cc_cmd);
    FILE *f = popen(cmd, "r");
    char out[4096];
    size_t n = f ? fread(out, 1, sizeof out - 1, f) : 0;
    int status = f ? pclose(f) : -1;
    out[n] = '\0';
    if (status != 0 || n == 0) {
        format(cc_why, sizeof cc_why, "`%s --version` failed (set LT_CC to a working C compiler)", cc_cmd);
        return;
    }
    lt_ir_hash_init(cc_id);
    hash_str(cc_id, CC_STAMP);
    hash_str(cc_id, out);
    hash_str(cc_id, cc_flags);
    if (!lt_cc_cache_dir()) {
        format(cc_why, sizeof cc_why, "cannot create the cache directory (LT_CACHE_DIR)");
        return;
    }
    void *h = NULL, *e = NULL;
    char key[33];
    if (build_locked(probe_source, sizeof probe_source - 1, 0, &h, &e, key, false) != LT_OK) {
        format(cc_why, sizeof cc_why, "`%s %s` cannot build a test program: %.300s", cc_cmd, cc_flags,
               lt_last_error());
        lt_clear_error();
        return;
    }
    dlclose(h);
    cc_ok = true;
}

bool lt_cc_available(char *why, size_t cap)
{
    pthread_mutex_lock(&cc_lock);
    if (!cc_checked)
        check_toolchain();
    bool ok = cc_ok;
    if (!ok && why && cap)
        format(why, cap, "%s", cc_why);
    pthread_mutex_unlock(&cc_lock);
    return ok;
}

/* ---- the disk cache ---------------------------------------------------------------- */

/* Opens a cached object if its trailer proves it complete and ours. */
static void *open_cached(const char *path, const uint64_t key[2], bool *corrupt)
{
    *corrupt = false;
    struct stat st;
    if (stat(path, &st) != 0)
        return NULL;
    size_t len = 0;
    char *data = read_file(path, &len, (size_t)st.st_size + 1);
    trailer t;
    bool ok = data && len >= sizeof t;
    if (ok) {
        memcpy(&t, data + len - sizeof t, sizeof t);
        uint64_t sum[2];
        lt_ir_hash_init(sum);
        ok = memcmp(t.magic, TRAILER_MAGIC, 8) == 0 && t.body_len == len - sizeof t && t.key[0] == key[0] &&
             t.key[1] == key[1];
        if (ok) {
            hash_bytes(sum, data, (size_t)t.body_len);
            ok = sum[0] == t.sum[0] && sum[1] == t.sum[1];
        }
    }
    free(data);
    if (!ok) {
        *corrupt = true;
        unlink(path);
        return NULL;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        *corrupt = true;
        unlink(path);
        return NULL;
    }
    utimensat(AT_FDCWD, path, NULL, 0); /* recently used */
    return h;
}

/* Appends the trailer to a freshly built object. */
static bool seal(const char *path, const uint64_t key[2])
{
    size_t len = 0;
    char *data = read_file(path, &len, (size_t)1 << 30);
    if (!data)
        return false;
    trailer t;
    memcpy(t.magic, TRAILER_MAGIC, 8);
    t.body_len = len;
    lt_ir_hash_init(t.sum);
    hash_bytes(t.sum, data, len);
    t.key[0] = key[0];
    t.key[1] = key[1];
    free(data);
    FILE *f = fopen(path, "ab");
    if (!f)
        return false;
    bool ok = fwrite(&t, sizeof t, 1, f) == 1;
    return fclose(f) == 0 && ok;
}

typedef struct cache_file {
    char name[300];
    off_t size;
    struct timespec mtime;
} cache_file;

static int by_mtime(const void *a, const void *b)
{
    const cache_file *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec)
        return (x->mtime.tv_sec > y->mtime.tv_sec) - (x->mtime.tv_sec < y->mtime.tv_sec);
    return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* Keeps the cache under LT_CACHE_MAX_MB (never evicting `keep`, the
 * object just stored) and drops temporaries that a crashed build left
 * behind (older than ten minutes). */
static void evict(const char *dir, const char *keep)
{
    const char *env = getenv("LT_CACHE_MAX_MB");
    double mb = env ? atof(env) : 0;
    long long limit = (long long)((mb > 0 ? mb : 512) * 1048576.0);
    DIR *d = opendir(dir);
    if (!d)
        return;
    cache_file *files = NULL;
    size_t n = 0, cap = 0;
    long long total = 0;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d));) {
        char path[1400];
        struct stat st;
        format(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (strcmp(path, keep) == 0) { /* counted, never evicted */
            total += st.st_size;
            continue;
        }
        if (strncmp(e->d_name, "tmp-", 4) == 0) {
            if (now - st.st_mtime > 600)
                unlink(path);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            cache_file *f = realloc(files, sizeof *f * cap);
            if (!f)
                break;
            files = f;
        }
        format(files[n].name, sizeof files[n].name, "%s", e->d_name);
        files[n].size = st.st_size;
        files[n].mtime = st.st_mtim;
        total += st.st_size;
        n++;
    }
    closedir(d);
    if (total > limit && files) {
        qsort(files, n, sizeof *files, by_mtime);
        for (size_t i = 0; i < n && total > limit * 9 / 10; i++) {
            char path[1400];
            format(path, sizeof path, "%s/%s", dir, files[i].name);
            if (unlink(path) == 0) {
                total -= files[i].size;
                lt_metric_add("DiskCacheEvicted", 1);
            }
        }
    }
    free(files);
}

/* The compiler's log for an error message: its first lines. */
static void log_excerpt(const char *log_path, char *out, size_t cap)
{
    size_t len = 0;
    char *log = read_file(log_path, &len, 65536);
    format(out, cap, "%s", log && len ? log : "(no output)");
    if (log && len >= cap && cap > 4)
        memcpy(out + cap - 5, "...\n", 5);
    free(log);
}

/* Temporary files of one build: per unit its source, object and log. */
typedef struct build_files {
    int units;
    char c[2][1300], o[2][1300], log[2][1300];
    char so[1300], link_log[1300];
} build_files;

static void remove_build_files(const build_files *f)
{
    for (int u = 0; u < f->units; u++) {
        unlink(f->c[u]);
        unlink(f->o[u]);
        unlink(f->log[u]);
    }
    unlink(f->so);
    unlink(f->link_log);
}

/* Reports a failed compiler run: keeps the source of unit u (u < 0: the
 * link step, no source) and the log next to the cache. */
static lt_status build_failed(build_files *f, const char *stem, int u, const char *log_path, int status)
{
    char kept[1300] = "(none: the link failed)", kept_log[1300], excerpt[LOG_EXCERPT];
    if (u >= 0) {
        if (f->units == 1)
            format(kept, sizeof kept, "%s/%s.failed.c", cache_dir, stem);
        else
            format(kept, sizeof kept, "%s/%s-part%d.failed.c", cache_dir, stem, u + 1);
        rename(f->c[u], kept);
    }
    format(kept_log, sizeof kept_log, "%s/%s.failed.log", cache_dir, stem);
    log_excerpt(log_path, excerpt, sizeof excerpt);
    rename(log_path, kept_log);
    remove_build_files(f);
    lt_metric_add("CompileErrors", 1);
    return lt_error(LT_ERR_UNSUPPORTED, "cpu compiler: `%s %s` failed (exit %d); source kept at %s; log:\n%s", cc_cmd,
                    cc_flags, status, kept, excerpt);
}

static lt_status command_too_long(build_files *f)
{
    remove_build_files(f);
    return lt_error(LT_ERR_ARGUMENT, "cpu compiler: the compile command is too long (LT_CC, LT_CFLAGS, LT_CACHE_DIR)");
}

/* Builds f->so from the sources: one unit in one compiler run; two units
 * compiled to objects by two concurrent runs, then linked. */
static lt_status run_compiler(build_files *f, const char *stem)
{
    char qc[1400], qo[1400], qlog[1400], qso[1400], cmd[4400];
    shell_quote(qso, sizeof qso, f->so);
    if (f->units == 1) {
        shell_quote(qc, sizeof qc, f->c[0]);
        shell_quote(qlog, sizeof qlog, f->log[0]);
        if (!format(cmd, sizeof cmd, "%s %s -o %s %s -lm >%s 2>&1", cc_cmd, cc_flags, qso, qc, qlog))
            return command_too_long(f);
        int status = run_shell(cmd);
        return status == 0 ? LT_OK : build_failed(f, stem, 0, f->log[0], status);
    }
    pid_t pid[2];
    for (int u = 0; u < 2; u++) {
        shell_quote(qc, sizeof qc, f->c[u]);
        shell_quote(qo, sizeof qo, f->o[u]);
        shell_quote(qlog, sizeof qlog, f->log[u]);
        if (!format(cmd, sizeof cmd, "%s %s -c -o %s %s >%s 2>&1", cc_cmd, cc_flags, qo, qc, qlog)) {
            if (u == 1)
                wait_shell(pid[0]);
            return command_too_long(f);
        }
        pid[u] = spawn_shell(cmd);
    }
    int status[2] = {wait_shell(pid[0]), wait_shell(pid[1])};
    for (int u = 0; u < 2; u++)
        if (status[u] != 0)
            return build_failed(f, stem, u, f->log[u], status[u]);
    char qo2[1400];
    shell_quote(qo, sizeof qo, f->o[0]);
    shell_quote(qo2, sizeof qo2, f->o[1]);
    shell_quote(qlog, sizeof qlog, f->link_log);
    if (!format(cmd, sizeof cmd, "%s %s -o %s %s %s -lm >%s 2>&1", cc_cmd, cc_flags, qso, qo, qo2, qlog))
        return command_too_long(f);
    int link = run_shell(cmd);
    return link == 0 ? LT_OK : build_failed(f, stem, -1, f->link_log, link);
}

/* Compiles src (split > 0: two units, see lt_cc_load) into the cache; the
 * caller holds cc_lock. */
static lt_status compile_into_cache(const char *src, size_t len, size_t split, const char *final_path,
                                    const char *stem, const uint64_t key[2])
{
    build_files f;
    char base[1200];
    format(base, sizeof base, "%s/tmp-%d-%u-%s", cache_dir, (int)getpid(), build_counter++, stem);
    f.units = split ? 2 : 1;
    size_t begin[2] = {0, split}, end[2] = {split ? split : len, len};
    for (int u = 0; u < f.units; u++) {
        format(f.c[u], sizeof f.c[u], "%s-%d.c", base, u + 1);
        format(f.o[u], sizeof f.o[u], "%s-%d.o", base, u + 1);
        format(f.log[u], sizeof f.log[u], "%s-%d.log", base, u + 1);
    }
    format(f.so, sizeof f.so, "%s.so", base);
    format(f.link_log, sizeof f.link_log, "%s-link.log", base);
    for (int u = 0; u < f.units; u++)
        if (!write_file(f.c[u], src + begin[u], end[u] - begin[u])) {
            lt_status st = lt_error(LT_ERR_IO, "cpu compiler: cannot write %s: %s", f.c[u], strerror(errno));
            remove_build_files(&f);
            return st;
        }
    lt_status st = run_compiler(&f, stem);
    if (st != LT_OK)
        return st;
    bool stored = seal(f.so, key) && rename(f.so, final_path) == 0;
    int err = errno;
    remove_build_files(&f);
    if (!stored)
        return lt_error(LT_ERR_IO, "cpu compiler: cannot store %s: %s", final_path, strerror(err));
    return LT_OK;
}

static lt_status build_locked(const char *src, size_t len, size_t split, void **handle, void **entry, char *key_hex,
                              bool count)
{
    uint64_t key[2] = {cc_id[0], cc_id[1]};
    hash_bytes(key, src, len);
    lt_ir_hash_u64(key, split);
    char stem[40], path[1200];
    format(stem, sizeof stem, "%016llx%016llx", (unsigned long long)key[0], (unsigned long long)key[1]);
    memcpy(key_hex, stem, 32);
    key_hex[32] = '\0';
    format(path, sizeof path, "%s/%s.so", cache_dir, stem);
    bool corrupt;
    void *h = open_cached(path, key, &corrupt);
    if (corrupt && count)
        lt_metric_add("DiskCacheCorrupt", 1);
    if (h) {
        if (count)
            lt_metric_add("DiskCacheHit", 1);
    } else {
        if (count)
            lt_metric_add("DiskCacheMiss", 1);
        lt_status st = compile_into_cache(src, len, split, path, stem, key);
        if (st != LT_OK)
            return st;
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            return lt_error(LT_ERR_IO, "cpu compiler: cannot load %s: %s", path, dlerror());
        evict(cache_dir, path);
    }
    void *e = dlsym(h, "lt_program_entry");
    if (!e) {
        dlclose(h);
        return lt_error(LT_ERR_STATE, "cpu compiler: %s has no entry point", path);
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
    if (split >= len)
        split = 0;
    lt_status st = build_locked(src, len, split, handle, entry, key_hex, true);
    pthread_mutex_unlock(&cc_lock);
    return st;
}

void lt_cc_unload(void *handle)
{
    if (handle)
        dlclose(handle);
}
