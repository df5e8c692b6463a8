/*
 * cc_cache.c - the disk cache of compiled programs, which treats its
 * directory and every byte in it as hostile.
 *
 * The directory. It is created 0700 and must be a real directory (not a
 * symlink), owned by us and writable by nobody else; anything else is
 * refused with a one-time warning and programs are built in a private
 * directory (mkdtemp, removed at exit) instead, so nothing planted in a
 * refused directory is ever loaded. The directory is opened once and every
 * later operation goes through that descriptor (openat, renameat...), so
 * replacing the path afterwards changes nothing.
 *
 * The files. Everything the library creates there is created exclusively
 * (O_CREAT | O_EXCL | O_NOFOLLOW) or renamed into place (rename replaces a
 * symlink, never writes through it). A build happens in a directory of its
 * own under an unpredictable name (tmp-XXXXXXXXXXXX, mode 0700), where the
 * compiler writes its objects; the finished object gets its trailer there
 * and is renamed to <key>.so. A cached object is opened without following
 * symlinks, must be a regular file of ours, is read once and validated
 * (lt_cc_object_valid) and only then loaded.
 *
 * Disk format: <key>.so is the compiler's output followed by a 48-byte
 * trailer (magic, body length, checksum of the body, key). The dynamic
 * loader ignores bytes after the ELF data; a file whose trailer is missing
 * or does not match (truncated, corrupted, another key) is deleted and
 * rebuilt. The directory is bounded (LT_CACHE_MAX_MB): least recently used
 * objects (by mtime, which a hit refreshes) are evicted first.
 */
#include "compiler/cc_internal.h"
#include "lazy/lazy.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TRAILER_MAGIC "LTSOv001"
#define MAX_OBJECT_BYTES ((size_t)1 << 30)

typedef struct trailer {
    char magic[8];
    uint64_t body_len;
    uint64_t sum[2];
    uint64_t key[2];
} trailer;

void cc_hash_bytes(uint64_t h[2], const void *data, size_t n)
{
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        lt_ir_hash_u64(h, w);
    }
    uint64_t tail = 0;
    if (n > i)
        memcpy(&tail, p + i, n - i);
    lt_ir_hash_u64(h, tail ^ ((uint64_t)n << 56));
}

bool lt_cc_object_valid(const unsigned char *bytes, size_t len, const uint64_t key[2])
{
    trailer t;
    if (!bytes || !key || len < sizeof t)
        return false;
    size_t body = len - sizeof t; /* no underflow: len >= sizeof t */
    memcpy(&t, bytes + body, sizeof t);
    if (memcmp(t.magic, TRAILER_MAGIC, 8) != 0 || t.body_len != (uint64_t)body || t.key[0] != key[0] ||
        t.key[1] != key[1])
        return false;
    uint64_t sum[2];
    lt_ir_hash_init(sum);
    cc_hash_bytes(sum, bytes, body);
    return sum[0] == t.sum[0] && sum[1] == t.sum[1];
}

/* ---- files ------------------------------------------------------------------------------------------ */

int cc_create_file(int dir_fd, const char *name)
{
    return openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

bool cc_write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* Reads fd to its end, expecting `expect` bytes (what fstat said): a file
 * that is shorter or longer by the time it is read gives NULL. */
static unsigned char *read_exactly(int fd, size_t expect)
{
    unsigned char *buf = malloc(expect + 2);
    size_t n = 0;
    while (buf && n <= expect) {
        ssize_t got = read(fd, buf + n, expect + 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    if (buf && n != expect) {
        free(buf);
        return NULL;
    }
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* Opens `name` in dir_fd for reading if it is a regular file (a symlink is
 * not followed, a FIFO does not block) of at most max bytes; st receives
 * its status. */
static int open_regular(int dir_fd, const char *name, size_t max, struct stat *st, int flags)
{
    int fd = openat(dir_fd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_size < 0 || (uint64_t)st->st_size > max) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

unsigned char *cc_read_file_at(int dir_fd, const char *name, size_t max, size_t *len)
{
    struct stat st;
    int fd = open_regular(dir_fd, name, max, &st, O_RDONLY);
    if (fd < 0)
        return NULL;
    unsigned char *data = read_exactly(fd, (size_t)st.st_size);
    close(fd);
    if (data)
        *len = (size_t)st.st_size;
    return data;
}

/* ---- removing directories ------------------------------------------------------------------------------- */

/* Deletes what directory fd holds (directories down to `depth` levels);
 * never follows a symlink. */
static void remove_contents(int fd, int depth)
{
    int own = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* a fresh read position */
    DIR *d = own >= 0 ? fdopendir(own) : NULL;
    if (!d) {
        if (own >= 0)
            close(own);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            int sub = depth > 0 ? openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
            if (sub >= 0) {
                remove_contents(sub, depth - 1);
                close(sub);
            }
            unlinkat(fd, e->d_name, AT_REMOVEDIR);
        } else {
            unlinkat(fd, e->d_name, 0);
        }
    }
    closedir(d);
}

static void remove_dir_at(int parent_fd, const char *name)
{
    int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        remove_contents(fd, 1);
        close(fd);
    }
    unlinkat(parent_fd, name, AT_REMOVEDIR);
}

/* ---- the cache directory ------------------------------------------------------------------------------ */

/* The directory the settings name, without trailing slashes (a trailing
 * slash would make the symlink checks below follow a symlink). */
static bool configured_path(char *path, size_t cap)
{
    const char *env = getenv("LT_CACHE_DIR"), *home = getenv("HOME");
    bool ok;
    if (env && *env)
        ok = cc_format(path, cap, "%s", env);
    else if (home && *home)
        ok = cc_format(path, cap, "%s/.cache/lazytensor", home);
    else
        ok = cc_format(path, cap, "/tmp/lazytensor-cache-%d", (int)geteuid());
    for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
        path[n - 1] = '\0';
    return ok;
}

/* mkdir -p, every directory it creates 0700. */
static void make_dirs(const char *path)
{
    char tmp[1024];
    if (!cc_format(tmp, sizeof tmp, "%s", path))
        return;
    for (char *s = tmp + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        mkdir(tmp, 0700);
        *s = '/';
    }
    mkdir(tmp, 0700);
}

/* Why st is no directory to trust, or NULL if it is one. */
static const char *distrust(const struct stat *st, char *why, size_t cap)
{
    if (S_ISLNK(st->st_mode))
        return "it is a symbolic link";
    if (!S_ISDIR(st->st_mode))
        return "it is not a directory";
    if (st->st_uid != geteuid()) {
        cc_format(why, cap, "it is owned by uid %d, not by this user (uid %d)", (int)st->st_uid, (int)geteuid());
        return why;
    }
    if (st->st_mode & (S_IWGRP | S_IWOTH)) {
        cc_format(why, cap, "it is writable by others (mode %04o)", (unsigned)(st->st_mode & 07777));
        return why;
    }
    return NULL;
}

/* Opens path if it is a directory we can trust (checked with lstat, then
 * again on the opened descriptor); -1 with the reason in why. */
static int open_trusted_dir(const char *path, char *why, size_t cap)
{
    struct stat before, after;
    char reason[160];
    if (lstat(path, &before) != 0) {
        cc_format(why, cap, "%s", strerror(errno));
        return -1;
    }
    const char *bad = distrust(&before, reason, sizeof reason);
    if (bad) {
        cc_format(why, cap, "%s", bad);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        cc_format(why, cap, "%s", strerror(errno));
        return -1;
    }
    bad = fstat(fd, &after) != 0 ? "it cannot be examined" : distrust(&after, reason, sizeof reason);
    if (!bad && (after.st_dev != before.st_dev || after.st_ino != before.st_ino))
        bad = "it was replaced while being opened";
    if (bad) {
        cc_format(why, cap, "%s", bad);
        close(fd);
        return -1;
    }
    return fd;
}

/* The private directory, removed at exit by the process that made it
 * (not by a forked child exiting). */
static cc_dir private_dir = {-1, true, ""};
static pid_t private_owner;

static void remove_private_dir(void)
{
    if (private_dir.fd < 0 || getpid() != private_owner)
        return;
    remove_contents(private_dir.fd, 2);
    close(private_dir.fd);
    private_dir.fd = -1;
    rmdir(private_dir.path);
}

static bool make_private_dir(cc_dir *d, char *why, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    const char *bases[2] = {tmp && tmp[0] == '/' ? tmp : "/tmp", "/tmp"};
    for (int i = 0; i < 2; i++) {
        char path[1024];
        if (!cc_format(path, sizeof path, "%s/lazytensor-XXXXXX", bases[i]) || !mkdtemp(path))
            continue;
        int fd = open_trusted_dir(path, why, cap);
        if (fd < 0) {
            rmdir(path);
            continue;
        }
        d->fd = fd;
        d->is_private = true;
        cc_format(d->path, sizeof d->path, "%s", path);
        private_dir = *d;
        private_owner = getpid();
        atexit(remove_private_dir);
        return true;
    }
    cc_format(why, cap, "cannot create a private temporary directory (TMPDIR)");
    return false;
}

bool cc_dir_open(cc_dir *d, char *why, size_t cap)
{
    char path[1024], reason[256];
    d->fd = -1;
    d->is_private = false;
    if (!configured_path(path, sizeof path)) {
        cc_format(reason, sizeof reason, "the path is too long");
    } else {
        make_dirs(path);
        d->fd = open_trusted_dir(path, reason, sizeof reason);
    }
    if (d->fd >= 0) {
        cc_format(d->path, sizeof d->path, "%s", path);
        return true;
    }
    fprintf(stderr,
            "lazytensor: warning: not using the disk cache %s: %s (it must be a directory of yours that nobody "
            "else can write; set LT_CACHE_DIR); compiled programs go to a private temporary directory, removed at "
            "exit\n",
            path, reason);
    return make_private_dir(d, why, cap);
}

/* ---- build directories -------------------------------------------------------------------------------- */

/* n random letters and digits. */
static void random_name(char *out, size_t n)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    static unsigned counter;
    unsigned char bytes[32];
    if (n > sizeof bytes)
        n = sizeof bytes;
    if (getrandom(bytes, n, GRND_NONBLOCK) != (ssize_t)n) { /* no entropy yet: a hash of time and place */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t h[2];
        lt_ir_hash_init(h);
        lt_ir_hash_u64(h, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
        lt_ir_hash_u64(h, ((uint64_t)getpid() << 32) ^ counter++);
        lt_ir_hash_u64(h, (uint64_t)(uintptr_t)&ts);
        for (size_t i = 0; i < n; i++)
            bytes[i] = (unsigned char)(h[i / 8 % 2] >> (8 * (i % 8)));
    }
    for (size_t i = 0; i < n; i++)
        out[i] = alphabet[bytes[i] % (sizeof alphabet - 1)];
    out[n] = '\0';
}

int cc_build_dir_make(const cc_dir *d, char *name)
{
    for (int attempt = 0; attempt < 64; attempt++) {
        memcpy(name, "tmp-", 4);
        random_name(name + 4, 12);
        if (mkdirat(d->fd, name, 0700) == 0)
            return openat(d->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

void cc_build_dir_remove(const cc_dir *d, const char *name, int fd)
{
    if (fd >= 0) {
        remove_contents(fd, 1);
        close(fd);
    }
    unlinkat(d->fd, name, AT_REMOVEDIR);
}

/* ---- objects -------------------------------------------------------------------------------------------- */

/* dlopen of d/<name> through the directory's descriptor where /proc allows
 * it (so the directory cannot be swapped under the path). */
static void *load_object(const cc_dir *d, const char *name, char *why, size_t cap)
{
    static int proc_fd_works = -1;
    if (proc_fd_works < 0)
        proc_fd_works = access("/proc/self/fd", X_OK) == 0;
    char path[1400];
    bool ok = proc_fd_works ? cc_format(path, sizeof path, "/proc/self/fd/%d/%s", d->fd, name)
                            : cc_format(path, sizeof path, "%s/%s", d->path, name);
    void *h = ok ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        const char *err = ok ? dlerror() : "path too long";
        cc_format(why, cap, "%s", err ? err : "dlopen failed");
    }
    return h;
}

/* Reads and validates an open cached object; loads it if still the file
 * that was validated. *replaced is set when another process renamed a new
 * object over it meanwhile (not damage: the caller tries again). */
static void *validate_and_load(const cc_dir *d, const char *name, int fd, const struct stat *st,
                               const uint64_t key[2], bool *replaced, char *why, size_t cap)
{
    *replaced = false;
    if (st->st_uid != geteuid()) {
        cc_format(why, cap, "not owned by this user");
        return NULL;
    }
    unsigned char *data = read_exactly(fd, (size_t)st->st_size);
    bool valid = data && lt_cc_object_valid(data, (size_t)st->st_size, key);
    free(data);
    if (!valid) {
        cc_format(why, cap, "truncated, damaged or built for another key");
        return NULL;
    }
    struct stat now;
    if (fstatat(d->fd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
        *replaced = true;
        cc_format(why, cap, "replaced while being validated");
        return NULL;
    }
    void *h = load_object(d, name, why, cap);
    if (h)
        futimens(fd, NULL); /* recently used */
    return h;
}

/* Processes that build the same program at once each rename their object
 * into place: a load that finds its file replaced meanwhile reads the new
 * one, and never deletes it. */
#define LOAD_ATTEMPTS 4

void *cc_cache_load(const cc_dir *d, const char *name, const uint64_t key[2], bool *corrupt, char *why, size_t cap)
{
    *corrupt = false;
    for (int attempt = 0; attempt < LOAD_ATTEMPTS; attempt++) {
        struct stat st;
        int fd = open_regular(d->fd, name, MAX_OBJECT_BYTES, &st, O_RDONLY);
        if (fd < 0 && errno == ENOENT) {
            cc_format(why, cap, "not in the cache");
            return NULL;
        }
        if (fd < 0) {
            cc_format(why, cap, "not a regular file of at most 1 GiB");
        } else {
            bool replaced;
            void *h = validate_and_load(d, name, fd, &st, key, &replaced, why, cap);
            close(fd);
            if (h)
                return h;
            if (replaced)
                continue;
        }
        *corrupt = true;
        unlinkat(d->fd, name, 0); /* removes a link itself, never its target */
        return NULL;
    }
    return NULL; /* replaced on every attempt: why says so */
}

bool cc_cache_store(const cc_dir *d, int build_fd, const char *name, const char *final_name, const uint64_t key[2])
{
    struct stat st;
    int fd = open_regular(build_fd, name, MAX_OBJECT_BYTES, &st, O_RDWR);
    if (fd < 0)
        return false;
    size_t len = (size_t)st.st_size;
    unsigned char *data = read_exactly(fd, len);
    bool ok = data != NULL;
    if (ok) {
        trailer t;
        memcpy(t.magic, TRAILER_MAGIC, 8);
        t.body_len = len;
        lt_ir_hash_init(t.sum);
        cc_hash_bytes(t.sum, data, len);
        t.key[0] = key[0];
        t.key[1] = key[1];
        ok = cc_write_all(fd, &t, sizeof t); /* the read left the offset at the end */
    }
    free(data);
    ok = close(fd) == 0 && ok;
    return ok && renameat(build_fd, name, d->fd, final_name) == 0;
}

bool cc_cache_put(const cc_dir *d, const char *final_name, const void *data, size_t n)
{
    char tmp[32] = "tmp-";
    random_name(tmp + 4, 16);
    int fd = cc_create_file(d->fd, tmp);
    if (fd < 0)
        return false;
    bool ok = cc_write_all(fd, data, n);
    ok = close(fd) == 0 && ok;
    ok = ok && renameat(d->fd, tmp, d->fd, final_name) == 0;
    if (!ok)
        unlinkat(d->fd, tmp, 0);
    return ok;
}

/* ---- eviction ----------------------------------------------------------------------------------------- */

typedef struct cache_file {
    char name[256];
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

static long long size_limit(void)
{
    const char *env = getenv("LT_CACHE_MAX_MB");
    double mb = env ? atof(env) : 0;
    return (long long)((mb > 0 && mb < 1e9 ? mb : 512) * 1048576.0);
}

/* Lists the regular files of the cache (counting `keep` in *total but not
 * listing it) and removes stale build directories on the way. */
static cache_file *list_files(const cc_dir *d, const char *keep, double stale_s, size_t *count, long long *total)
{
    int own = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dir = own >= 0 ? fdopendir(own) : NULL;
    if (!dir) {
        if (own >= 0)
            close(own);
        return NULL;
    }
    cache_file *files = NULL;
    size_t n = 0, cap = 0;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(dir));) {
        struct stat st;
        if (e->d_name[0] == '.' || fstatat(d->fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (strncmp(e->d_name, "tmp-", 4) == 0) { /* a build, or a crashed one */
            if ((double)(now - st.st_mtime) > stale_s) {
                if (S_ISDIR(st.st_mode))
                    remove_dir_at(d->fd, e->d_name);
                else
                    unlinkat(d->fd, e->d_name, 0);
            }
            continue;
        }
        if (!S_ISREG(st.st_mode) || strlen(e->d_name) >= sizeof files->name)
            continue;
        *total += st.st_size;
        if (strcmp(e->d_name, keep) == 0) /* counted, never evicted */
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            cache_file *f = realloc(files, sizeof *f * cap);
            if (!f)
                break;
            files = f;
        }
        cc_format(files[n].name, sizeof files[n].name, "%s", e->d_name);
        files[n].size = st.st_size;
        files[n].mtime = st.st_mtim;
        n++;
    }
    closedir(dir);
    *count = n;
    return files;
}

void cc_cache_evict(const cc_dir *d, const char *keep, double stale_s)
{
    long long limit = size_limit(), total = 0;
    size_t n = 0;
    cache_file *files = list_files(d, keep, stale_s, &n, &total);
    if (total > limit && files) {
        qsort(files, n, sizeof *files, by_mtime);
        for (size_t i = 0; i < n && total > limit * 9 / 10; i++) {
            if (unlinkat(d->fd, files[i].name, 0) == 0) {
                total -= files[i].size;
                lt_metric_add("DiskCacheEvicted", 1);
            }
        }
    }
    free(files);
}
