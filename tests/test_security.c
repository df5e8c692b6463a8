/* test_security.c - the disk cache and the compiler invocation treat
 * everything from outside as hostile: symlinks planted in the cache are
 * never written through or loaded, a cache directory that is a symlink,
 * belongs to someone else or is writable by others is refused (programs
 * still compile, in a private temporary directory), LT_CC and LT_CFLAGS
 * never reach a shell (shell metacharacters are literal characters, words
 * are split like the shell does), and a compiler that hangs is killed
 * after LT_CC_TIMEOUT seconds while the graph still runs, on interp.
 *
 * The compiler probe and the cache directory are settled once per process,
 * so each case runs this binary again (fork + exec of /proc/self/exe with
 * LT_TEST_CHILD set and its own environment) under a deadline; the child
 * prints what it computed and the parent checks it. */
#include "lt_test.h"
#include "compiler/compiler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_DEADLINE_S 40
#define FLAGS "-O1 -fopenmp-simd -fno-math-errno -ffp-contract=off -fPIC -shared"

static char test_dir[256];   /* everything this test creates lives below it */
static char ref_dir[300];    /* a cache filled by a normal run (reference objects) */
static bool ref_done;

/* snprintf for paths and settings (all far shorter than their buffers). */
static void fmt(char *dst, size_t cap, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *dst, size_t cap, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsnprintf(dst, cap, format, ap);
    va_end(ap);
}

/* ---- running a child ---------------------------------------------------------------------- */

typedef struct child_result {
    char out[16384];
    int status;     /* exit status, -1 if killed */
    bool overtime;  /* killed at the deadline */
    double seconds; /* wall time */
} child_result;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Child side of run_child: a clean environment plus `env` ("NAME=value",
 * or "NAME" alone to unset it), output into fd. */
static void exec_child(int fd, const char *const *env)
{
    setpgid(0, 0); /* the parent kills the whole group at the deadline */
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
    const char *cleared[] = {"LT_CC", "LT_CFLAGS", "LT_BACKEND", "LT_CC_TIMEOUT", "LT_CACHE_MAX_MB", "LT_DUMP_KERNELS"};
    for (size_t i = 0; i < sizeof cleared / sizeof *cleared; i++)
        unsetenv(cleared[i]);
    setenv("LT_TEST_CHILD", "1", 1);
    /* children check the compiler and its cache: each graph compiled before
     * it runs, not on the tiered backend's background thread */
    setenv("LT_TIERED", "0", 1);
    for (int i = 0; env && env[i]; i++) {
        if (strchr(env[i], '='))
            putenv((char *)env[i]);
        else
            unsetenv(env[i]);
    }
    execl("/proc/self/exe", "test_security", (char *)NULL);
    _exit(127);
}

static void run_child(const char *const *env, child_result *r)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    fflush(stderr);
    double start = now_s();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        exec_child(fds[1], env);
    }
    close(fds[1]);
    size_t n = 0;
    r->overtime = false;
    for (;;) {
        double left = CHILD_DEADLINE_S - (now_s() - start);
        struct pollfd p = {fds[0], POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) == 0) {
            r->overtime = true;
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            break;
        }
        ssize_t got = read(fds[0], r->out + n, sizeof r->out - 1 - n);
        if (got <= 0)
            break;
        n += (size_t)got;
        if (n == sizeof r->out - 1)
            break;
    }
    r->out[n] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->seconds = now_s() - start;
}

static long long field(const child_result *r, const char *name)
{
    const char *p = strstr(r->out, name);
    if (!p) {
        print_error("child output lacks %s:\n%s\n", name, r->out);
        fail();
    }
    return atoll(p + strlen(name));
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The child's small graph: sum(relu(x / 4 - 100) * x) over x = 0..4095. */
static double small_expect(void)
{
    double s = 0;
    for (int i = 0; i < 4096; i++)
        s += fmax(i * 0.25 - 100, 0) * i;
    return s;
}

/* The child finished in time, and every graph it ran had the right values. */
static void assert_child_ok(const child_result *r)
{
    const char *p = strstr(r->out, "value=");
    if (r->overtime || r->status != 0 || !p || field(r, "status=") != 0) {
        print_error("child failed (exit %d%s, %.1f s):\n%s\n", r->status, r->overtime ? ", killed at the deadline" : "",
                    r->seconds, r->out);
        fail();
    }
    double v = atof(p + 6), e = small_expect();
    if (fabs(v - e) > 1e-6 * e) {
        print_error("child computed %.17g, expected %.17g:\n%s\n", v, e, r->out);
        fail();
    }
    if (strstr(r->out, "big=bad")) {
        print_error("child's long chain differs from eager:\n%s\n", r->out);
        fail();
    }
}

/* ---- files ---------------------------------------------------------------------------------- */

static void path_in(char *dst, size_t cap, const char *name)
{
    fmt(dst, cap, "%s/%s", test_dir, name);
}

static void make_dir(char *dir, size_t cap, const char *name, mode_t mode)
{
    path_in(dir, cap, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(chmod(dir, mode), 0);
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(path, mode), 0);
}

/* The whole file (malloc'd, NUL-terminated), or NULL. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap + 1);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Entries of dir other than . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

/* Stems (32 hex digits) of the files in dir ending with suffix. */
static int stems(const char *dir, const char *suffix, char out[][40], int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    size_t sl = strlen(suffix);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len == 32 + sl && strcmp(e->d_name + 32, suffix) == 0 && n < max)
            fmt(out[n++], 40, "%.32s", e->d_name);
    }
    if (d)
        closedir(d);
    return n;
}

/* One run with an empty cache and the default flags: fills ref_dir with
 * valid objects for the probe, the small graph and the long chain. */
static void ensure_reference(void)
{
    if (ref_done)
        return;
    if (ref_dir[0])
        fail_msg("the reference run failed (see the first test)");
    make_dir(ref_dir, sizeof ref_dir, "reference", 0700);
    char cache[400];
    fmt(cache, sizeof cache, "LT_CACHE_DIR=%s", ref_dir);
    const char *env[] = {cache, "LT_TEST_BIG=1", NULL};
    child_result r;
    run_child(env, &r);
    assert_child_ok(&r);
    assert_non_null(strstr(r.out, "backend=cpu"));
    char s[16][40];
    assert_true(stems(ref_dir, ".so", s, 16) >= 3); /* probe, small graph, long chain */
    ref_done = true;
}

/* ---- validation of cache files ------------------------------------------------------------------ */

static void parse_key(const char *stem, uint64_t key[2])
{
    char half[17];
    fmt(half, sizeof half, "%.16s", stem);
    key[0] = strtoull(half, NULL, 16);
    fmt(half, sizeof half, "%.16s", stem + 16);
    key[1] = strtoull(half, NULL, 16);
}

/* A cached object is valid only whole, unmodified and under its own key;
 * no input makes the validator read out of bounds (ASan checks that). */
static void test_object_validation(void **state)
{
    (void)state;
    ensure_reference();
    char s[16][40], path[400];
    int n = stems(ref_dir, ".so", s, 16);
    fmt(path, sizeof path, "%s/%s.so", ref_dir, s[0]);
    uint64_t key[2], other[2];
    parse_key(s[0], key);
    parse_key(s[n - 1], other);
    size_t len = 0;
    unsigned char *obj = slurp(path, &len);
    assert_non_null(obj);
    assert_true(len > 48);
    assert_true(lt_cc_object_valid(obj, len, key));
    assert_false(lt_cc_object_valid(obj, len, other));
    assert_false(lt_cc_object_valid(NULL, 0, key));
    assert_false(lt_cc_object_valid(obj, len, NULL));
    for (size_t cut = 0; cut < len; cut += cut < 256 ? 1 : 997) { /* every short prefix, then a sample */
        unsigned char *copy = malloc(cut ? cut : 1); /* exact size: ASan sees any overread */
        memcpy(copy, obj, cut);
        assert_false(lt_cc_object_valid(copy, cut, key));
        free(copy);
    }
    for (size_t at = 0; at < len; at += 1 + len / 64) { /* one flipped byte anywhere */
        obj[at] ^= 0x40;
        assert_false(lt_cc_object_valid(obj, len, key));
        obj[at] ^= 0x40;
    }
    assert_true(lt_cc_object_valid(obj, len, key));
    uint64_t huge = UINT64_MAX; /* a body length that would overflow */
    memcpy(obj + len - 40, &huge, 8);
    assert_false(lt_cc_object_valid(obj, len, key));
    unsigned char tiny[48] = "LTSOv001"; /* a trailer alone claiming an empty body */
    assert_false(lt_cc_object_valid(tiny, sizeof tiny, key));
    free(obj);
}

/* ---- symlinks --------------------------------------------------------------------------------- */

#define VICTIM_TEXT "precious data that the cache must never overwrite\n"

/* Plants, in dir, a symlink to the victim at every name a build of the given
 * stems could create, except that every other final object points to its
 * reference object instead (which must not be loaded through the link). */
static void plant_symlinks(const char *dir, const char *victim, const char *stems_csv, const char *objdir)
{
    const char *files[] = {"-1.c", "-2.c", "-1.o", "-2.o", "-1.log", "-2.log", ".so", "-link.log"};
    char stem[40], link[800], target[800];
    int i = 0;
    for (const char *p = stems_csv; *p; p += *p == ',', i++) {
        size_t len = strcspn(p, ",");
        fmt(stem, sizeof stem, "%.*s", (int)len, p);
        p += len;
        fmt(link, sizeof link, "%s/%s.so", dir, stem);
        fmt(target, sizeof target, "%s/%s.so", objdir, stem);
        if (symlink(i % 2 == 0 && file_exists(target) ? target : victim, link) != 0)
            _exit(3);
        const char *failed[] = {".failed.c", ".failed.log", "-part1.failed.c", "-part2.failed.c"};
        for (int f = 0; f < 4; f++) {
            fmt(link, sizeof link, "%s/%s%s", dir, stem, failed[f]);
            symlink(victim, link);
        }
        for (unsigned counter = 0; counter < 8; counter++) /* temporaries named by pid and counter */
            for (int f = 0; f < 8; f++) {
                fmt(link, sizeof link, "%s/tmp-%d-%u-%s%s", dir, (int)getpid(), counter, stem, files[f]);
                symlink(victim, link);
            }
    }
}

static void make_victim(char *victim, size_t cap, const char *name)
{
    path_in(victim, cap, name);
    write_text(victim, VICTIM_TEXT, 0600);
}

static void assert_victim_intact(const char *victim)
{
    size_t len = 0;
    unsigned char *text = slurp(victim, &len);
    assert_non_null(text);
    if (strcmp((char *)text, VICTIM_TEXT) != 0) {
        print_error("the file behind a planted symlink was overwritten: \"%.200s\"\n", (char *)text);
        free(text);
        fail();
    }
    free(text);
}

static void stem_list(const char *dir, const char *suffix, char *csv, size_t cap)
{
    char s[16][40];
    int n = stems(dir, suffix, s, 16);
    assert_true(n >= 1);
    csv[0] = '\0';
    for (int i = 0; i < n; i++)
        fmt(csv + strlen(csv), cap - strlen(csv), "%s%s", i ? "," : "", s[i]);
}

/* Symlinks at every name the cache writes or reads: nothing is written
 * through them, no object is loaded through them, values are right. */
static void test_planted_symlinks_are_not_followed(void **state)
{
    (void)state;
    ensure_reference();
    char victim[300], dir[300], csv[800], env_dir[400], env_victim[400], env_stems[900], env_obj[400];
    make_victim(victim, sizeof victim, "victim_build");
    make_dir(dir, sizeof dir, "planted", 0700);
    stem_list(ref_dir, ".so", csv, sizeof csv);
    fmt(env_dir, sizeof env_dir, "LT_CACHE_DIR=%s", dir);
    fmt(env_victim, sizeof env_victim, "LT_TEST_PLANT=%s", victim);
    fmt(env_stems, sizeof env_stems, "LT_TEST_STEMS=%s", csv);
    fmt(env_obj, sizeof env_obj, "LT_TEST_OBJDIR=%s", ref_dir);
    const char *env[] = {env_dir, env_victim, env_stems, env_obj, "LT_TEST_BIG=1", NULL};
    child_result r;
    run_child(env, &r);
    assert_child_ok(&r);
    assert_victim_intact(victim);
    assert_non_null(strstr(r.out, "backend=cpu"));
    assert_int_equal(field(&r, "hit="), 0); /* the links to valid objects were not loaded */
    assert_true(field(&r, "miss=") >= 2);
    char s[16][40], path[400];
    int n = stems(ref_dir, ".so", s, 16);
    for (int i = 0; i < n; i++) { /* the same programs, rebuilt as regular files in place of the links */
        struct stat st;
        fmt(path, sizeof path, "%s/%s.so", dir, s[i]);
        assert_int_equal(lstat(path, &st), 0);
        if (!S_ISREG(st.st_mode))
            fail_msg("%s is still not a regular file", path);
    }
    fmt(path, sizeof path, "%s/%s.so", ref_dir, s[0]); /* link targets untouched */
    assert_true(file_exists(path));
}

/* The names a failed build keeps (source and log) are not written through
 * links either. */
static void test_failed_build_does_not_follow_symlinks(void **state)
{
    (void)state;
    char victim[300], first[300], dir[300], csv[800], env_dir[400], env_victim[400], env_stems[900];
    make_victim(victim, sizeof victim, "victim_failed");
    make_dir(first, sizeof first, "failed_names", 0700);
    const char *broken = "LT_CFLAGS=" FLAGS " -Dlt_rt=@broken@"; /* the probe builds, programs do not */
    fmt(env_dir, sizeof env_dir, "LT_CACHE_DIR=%s", first);
    const char *env1[] = {env_dir, broken, NULL};
    child_result r;
    run_child(env1, &r);
    assert_false(r.overtime);
    assert_true(field(&r, "errors=") >= 1);
    stem_list(first, ".failed.c", csv, sizeof csv);
    make_dir(dir, sizeof dir, "failed_planted", 0700);
    fmt(env_dir, sizeof env_dir, "LT_CACHE_DIR=%s", dir);
    fmt(env_victim, sizeof env_victim, "LT_TEST_PLANT=%s", victim);
    fmt(env_stems, sizeof env_stems, "LT_TEST_STEMS=%s", csv);
    const char *env2[] = {env_dir, broken, env_victim, env_stems, "LT_TEST_OBJDIR=/nonexistent", NULL};
    run_child(env2, &r);
    assert_false(r.overtime);
    assert_int_equal(r.status, 0);
    assert_true(field(&r, "errors=") >= 1);
    assert_non_null(strstr(r.out, "@broken@"));
    assert_victim_intact(victim);
    char kept[900];
    fmt(kept, sizeof kept, "%s/%.32s.failed.c", dir, csv);
    struct stat st;
    assert_int_equal(lstat(kept, &st), 0);
    assert_true(S_ISREG(st.st_mode));
}

/* A cache directory that is a symlink is refused: nothing is written
 * where it points, programs still compile. */
static void test_symlinked_cache_dir_is_refused(void **state)
{
    (void)state;
    char real[300], link[300], env_dir[400];
    make_dir(real, sizeof real, "real_cache", 0700);
    path_in(link, sizeof link, "linked_cache");
    assert_int_equal(symlink(real, link), 0);
    fmt(env_dir, sizeof env_dir, "LT_CACHE_DIR=%s", link);
    const char *env[] = {env_dir, NULL};
    child_result r;
    run_child(env, &r);
    assert_child_ok(&r);
    assert_non_null(strstr(r.out, "backend=cpu"));
    assert_int_equal(entries(real), 0);
    assert_int_equal(count_of(r.out, "not using the disk cache"), 1);
    assert_non_null(strstr(r.out, link));
    assert_non_null(strstr(r.out, "symbolic link"));
}

/* Runs a child on cache directory dir (NULL: HOME and LT_CACHE_DIR unset)
 * and checks it was refused: one warning naming it with `why`, nothing
 * loaded from it or written to it, the private directory gone at exit. */
static void assert_cache_dir_refused(const char *dir, const char *shown, const char *why)
{
    char env_dir[400];
    fmt(env_dir, sizeof env_dir, "LT_CACHE_DIR=%s", dir ? dir : "");
    const char *env[] = {dir ? env_dir : "LT_CACHE_DIR", "HOME", NULL};
    int before = entries(shown);
    child_result r;
    run_child(env, &r);
    assert_child_ok(&r);
    assert_non_null(strstr(r.out, "backend=cpu"));
    assert_int_equal(field(&r, "hit="), 0); /* the planted object was not loaded */
    assert_int_equal(entries(shown), before);
    assert_int_equal(count_of(r.out, "not using the disk cache"), 1);
    assert_non_null(strstr(r.out, shown));
    assert_non_null(strstr(r.out, why));
    const char *used = strstr(r.out, "cachedir=");
    assert_non_null(used);
    char private_dir[400];
    fmt(private_dir, sizeof private_dir, "%.*s", (int)strcspn(used + 9, " \n"), used + 9);
    assert_true(strcmp(private_dir, shown) != 0);
    assert_false(file_exists(private_dir)); /* removed at exit */
}

/* Copies the reference object of the small graph (a valid file for the
 * key the child will look up) into dir. */
static void plant_valid_objects(const char *dir)
{
    char s[16][40], from[400], to[400];
    int n = stems(ref_dir, ".so", s, 16);
    for (int i = 0; i < n; i++) {
        fmt(from, sizeof from, "%s/%s.so", ref_dir, s[i]);
        fmt(to, sizeof to, "%s/%s.so", dir, s[i]);
        size_t len = 0;
        unsigned char *data = slurp(from, &len);
        assert_non_null(data);
        FILE *f = fopen(to, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(data, 1, len, f), len);
        fclose(f);
        free(data);
    }
}

static void test_world_writable_cache_dir_is_refused(void **state)
{
    (void)state;
    ensure_reference();
    char dir[300];
    make_dir(dir, sizeof dir, "open_cache", 0700);
    plant_valid_objects(dir);
    assert_int_equal(chmod(dir, 0777), 0);
    assert_cache_dir_refused(dir, dir, "writable by others");
}

static void test_foreign_cache_dir_is_refused(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        printf("not root: the cache directory owned by another user is not tested\n");
        skip();
    }
    ensure_reference();
    char dir[300];
    make_dir(dir, sizeof dir, "foreign_cache", 0700);
    plant_valid_objects(dir);
    assert_int_equal(chown(dir, 65534, 65534), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    assert_cache_dir_refused(dir, dir, "owned by uid 65534");
}

static char default_dir[300]; /* set while the test owns the default directory */

/* Removes the default directory the test made, even after a failure. */
static int default_dir_teardown(void **state)
{
    if (default_dir[0]) {
        char s[16][40], path[400];
        int n = stems(default_dir, ".so", s, 16);
        for (int i = 0; i < n; i++) {
            fmt(path, sizeof path, "%s/%s.so", default_dir, s[i]);
            unlink(path);
        }
        rmdir(default_dir);
        default_dir[0] = '\0';
    }
    return lt_test_teardown(state);
}

/* Without HOME the default directory is under /tmp, where anyone could
 * have made it first. */
static void test_default_tmp_cache_dir_is_checked(void **state)
{
    (void)state;
    char dir[300];
    fmt(dir, sizeof dir, "/tmp/lazytensor-cache-%d", (int)geteuid());
    if (file_exists(dir)) {
        printf("%s exists already: the default directory is not tested\n", dir);
        skip();
    }
    ensure_reference();
    assert_int_equal(mkdir(dir, 0700), 0);
    fmt(default_dir, sizeof default_dir, "%s", dir);
    plant_valid_objects(dir);
    bool root = geteuid() == 0;
    if (root)
        assert_int_equal(chown(dir, 65534, 65534), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    assert_cache_dir_refused(NULL, dir, root ? "owned by uid 65534" : "writable by others");
}

/* ---- LT_CC and LT_CFLAGS never reach a shell ------------------------------------------------------ */

static void test_shell_metacharacters_are_literal(void **state)
{
    (void)state;
    char marker[300], dir[300];
    path_in(marker, sizeof marker, "marker");
    make_dir(dir, sizeof dir, "metachar_cache", 0700);
    const char *cflags[] = {"; touch %s; true", "$(touch %s)", "`touch %s`", "| touch %s", "&& touch %s",
                            "-DX='$(touch %s)'"};
    const char *ccs[] = {"cc; touch %s; true", "cc $(touch %s)", "cc `touch %s`", "cc | touch %s"};
    for (int i = 0; i < 10; i++) {
        char value[700], setting[800], env_dir[400];
        bool is_cc = i >= 6;
        fmt(value, sizeof value, is_cc ? ccs[i - 6] : cflags[i], marker);
        if (is_cc)
            fmt(setting, sizeof setting, "LT_CC=%s", value);
        else
            fmt(setting, sizeof setting, "LT_CFLAGS=" FLAGS " %s", value);
        fmt(env_dir, sizeof env_dir, "LT_CACHE_DIR=%s", dir);
        const char *env[] = {env_dir, setting, NULL};
        child_result r;
        run_child(env, &r);
        assert_child_ok(&r); /* on interp if the compiler rejects the words */
        if (file_exists(marker))
            fail_msg("%s ran a shell command", setting);
    }
}

/* A compiler that logs its arguments one per line, then runs cc (its first
 * argument, --marker, dropped). */
static const char logger_script[] =
    "#!/bin/sh\n"
    "for a in \"$@\"; do printf '[%%s]\\n' \"$a\"; done >> '%s'\n"
    "shift\n"
    "exec cc \"$@\"\n";

/* Words are split like the shell: quotes and backslashes group and escape,
 * and the script path with a space is one word. */
static void test_compiler_words_are_split_like_shell(void **state)
{
    (void)state;
    char bin[300], script[400], log[300], text[1200], cc[600], dir[300], env_dir[400];
    make_dir(bin, sizeof bin, "bin dir", 0700);
    path_in(log, sizeof log, "args.log");
    fmt(script, sizeof script, "%s/cc logger", bin);
    fmt(text, sizeof text, logger_script, log);
    write_text(script, text, 0700);
    make_dir(dir, sizeof dir, "words_cache", 0700);
    fmt(cc, sizeof cc, "LT_CC=\"%s\" --marker", script);
    fmt(env_dir, sizeof env_dir, "LT_CACHE_DIR=%s", dir);
    const char *flags = "LT_CFLAGS=" FLAGS " -DLT_A=\"x y\" -DLT_B='$(touch z) `w`' -DLT_C=a\\ b -DLT_D=\"q\\\"r\\\"\"";
    const char *env[] = {env_dir, cc, flags, NULL};
    child_result r;
    run_child(env, &r);
    assert_child_ok(&r);
    assert_non_null(strstr(r.out, "backend=cpu"));
    size_t len = 0;
    char *args = (char *)slurp(log, &len);
    assert_non_null(args);
    const char *expected[] = {"[--marker]\n[--version]\n", "[-O1]\n", "[-shared]\n", "[-DLT_A=x y]\n",
                              "[-DLT_B=$(touch z) `w`]\n", "[-DLT_C=a b]\n", "[-DLT_D=q\"r\"]\n", "[-lm]\n"};
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++)
        if (!strstr(args, expected[i]))
            fail_msg("the compiler's arguments lack %s:\n%s", expected[i], args);
    free(args);
}

/* A quote left open is an error that names the variable. */
static void test_unterminated_quote_is_reported(void **state)
{
    (void)state;
    char dir[300], env_dir[400];
    make_dir(dir, sizeof dir, "quote_cache", 0700);
    fmt(env_dir, sizeof env_dir, "LT_CACHE_DIR=%s", dir);
    const char *env[] = {env_dir, "LT_CFLAGS=" FLAGS " -DX=\"open", NULL};
    child_result r;
    run_child(env, &r);
    assert_child_ok(&r);
    assert_non_null(strstr(r.out, "backend=interp"));
    assert_non_null(strstr(r.out, "LT_CFLAGS"));
    assert_non_null(strstr(r.out, "unterminated"));
}

/* ---- a compiler that hangs ------------------------------------------------------------------------ */

/* Hangs on --version. */
static const char hang_version_script[] =
    "#!/bin/sh\n"
    "if [ \"$1\" = --version ]; then echo $$ >> '%s'; exec sleep 1000; fi\n"
    "exec cc \"$@\"\n";

/* Works for the probe, hangs on generated programs (they use lt_rt). */
static const char hang_compile_script[] =
    "#!/bin/sh\n"
    "for a in \"$@\"; do\n"
    "  case \"$a\" in *.c) if grep -q lt_rt \"$a\"; then echo $$ >> '%s'; exec sleep 1000; fi;; esac\n"
    "done\n"
    "exec cc \"$@\"\n";

static void run_hanging(const char *name, const char *script_text, bool big, child_result *r)
{
    char bin[300], script[400], text[1200], pids[300], cc[500], env_pids[400], dir[300], env_dir[400];
    char sub[64];
    fmt(sub, sizeof sub, "%s_bin", name);
    make_dir(bin, sizeof bin, sub, 0700);
    fmt(pids, sizeof pids, "%s/pids", bin);
    fmt(script, sizeof script, "%s/cc", bin);
    fmt(text, sizeof text, script_text, pids);
    write_text(script, text, 0700);
    fmt(sub, sizeof sub, "%s_cache", name);
    make_dir(dir, sizeof dir, sub, 0700);
    fmt(cc, sizeof cc, "LT_CC=%s", script);
    fmt(env_pids, sizeof env_pids, "LT_TEST_PIDFILE=%s", pids);
    fmt(env_dir, sizeof env_dir, "LT_CACHE_DIR=%s", dir);
    const char *env[] = {env_dir, cc, env_pids, "LT_CC_TIMEOUT=2", big ? "LT_TEST_BIG=1" : "LT_TEST_BIG", NULL};
    run_child(env, r);
    assert_child_ok(r);
    assert_true(r->seconds < 20);
    assert_true(field(r, "hung=") >= 1);   /* the compiler did hang */
    assert_int_equal(field(r, "alive="), 0); /* and was killed and reaped */
    assert_non_null(strstr(r->out, "LT_CC_TIMEOUT"));
}

static void test_hanging_version_probe_times_out(void **state)
{
    (void)state;
    child_result r;
    run_hanging("hang_version", hang_version_script, false, &r);
    assert_non_null(strstr(r.out, "backend=interp"));
    assert_int_equal(count_of(r.out, "warning"), 1);
}

/* The first graph (two units compiled at once) hits the timeout and runs on
 * interp; the next one does not wait for the compiler again. */
static void test_hanging_compile_falls_back_to_interp(void **state)
{
    (void)state;
    child_result r;
    run_hanging("hang_compile", hang_compile_script, true, &r);
    assert_int_equal(field(&r, "hung="), 2);
    assert_int_equal(count_of(r.out, "warning"), 1);
    assert_true(r.seconds < 15);
}

/* ---- child processes ------------------------------------------------------------------------------ */

static double *long_chain(lt_device dev, int64_t *n)
{
    lt_scope_begin();
    double v[64 * 32];
    for (int i = 0; i < 64 * 32; i++)
        v[i] = sin(i * 0.37);
    lt_tensor *x = lt_to(lt_test_tensor(v, (int64_t[]){64, 32}, 2, LT_F32), dev);
    /* a program large enough to be compiled as two units: 48 kernels of
     * different row counts, so that no two share a function */
    for (int k = 0; k < 48; k++)
        x = lt_softmax(lt_add_scalar(lt_mul_scalar(lt_narrow(x, 0, 0, 64 - k), 3.0 + k * 0.01), 0.1 * k), k % 2);
    double *out = x ? lt_test_values(x) : NULL;
    *n = x ? lt_tensor_numel(x) : 0;
    lt_scope_end();
    return out;
}

static bool long_chain_matches_eager(void)
{
    int64_t n = 0, m = 0;
    double *lazy_values = long_chain(lt_device_parse("lazy"), &n);
    double *eager_values = long_chain(lt_device_cpu(), &m);
    bool ok = lazy_values && eager_values && n == m && n == 17 * 32;
    for (int64_t i = 0; ok && i < n; i++)
        ok = fabs(lazy_values[i] - eager_values[i]) <= 1e-6 * (1 + fabs(eager_values[i]));
    free(lazy_values);
    free(eager_values);
    return ok;
}

/* Of the processes listed in pidfile: how many there were, how many still exist. */
static void count_pids(const char *pidfile, int *listed, int *alive)
{
    *listed = *alive = 0;
    FILE *f = pidfile ? fopen(pidfile, "r") : NULL;
    for (int pid; f && fscanf(f, "%d", &pid) == 1;) {
        (*listed)++;
        *alive += kill(pid, 0) == 0;
    }
    if (f)
        fclose(f);
}

static int child_main(void)
{
    const char *victim = getenv("LT_TEST_PLANT");
    if (victim)
        plant_symlinks(getenv("LT_CACHE_DIR"), victim, getenv("LT_TEST_STEMS"), getenv("LT_TEST_OBJDIR"));
    const char *big = getenv("LT_TEST_BIG");
    if (big && strcmp(big, "1") == 0)
        printf("big=%s\n", long_chain_matches_eager() ? "ok" : "bad");
    lt_device lz = lt_device_parse("lazy");
    lt_tensor *x = lt_arange(0, 4096, 1, LT_F32, lz);
    lt_tensor *y = lt_sum(lt_mul(lt_relu(lt_sub_scalar(lt_mul_scalar(x, 0.25), 100)), x), NULL, 0, false);
    double v = 0;
    lt_status st = lt_item(y, &v);
    const char *dir = lt_cc_cache_dir();
    int listed, alive;
    count_pids(getenv("LT_TEST_PIDFILE"), &listed, &alive);
    printf("status=%d value=%.17g hit=%lld miss=%lld errors=%lld backend=%s hung=%d alive=%d cachedir=%s\n", (int)st,
           v, (long long)lt_metrics_counter("DiskCacheHit"), (long long)lt_metrics_counter("DiskCacheMiss"),
           (long long)lt_metrics_counter("CompileErrors"), lt_lazy_backend(), listed, alive, dir ? dir : "(none)");
    if (st != LT_OK)
        printf("error=%s\n", lt_last_error());
    return 0;
}

int main(void)
{
    if (getenv("LT_TEST_CHILD"))
        return child_main();
    char dir[] = "/tmp/lt_security_test_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    fmt(test_dir, sizeof test_dir, "%s", dir);
    const struct CMUnitTest tests[] = {
        LT_TEST(test_object_validation),
        LT_TEST(test_planted_symlinks_are_not_followed),
        LT_TEST(test_failed_build_does_not_follow_symlinks),
        LT_TEST(test_symlinked_cache_dir_is_refused),
        LT_TEST(test_world_writable_cache_dir_is_refused),
        LT_TEST(test_foreign_cache_dir_is_refused),
        cmocka_unit_test_setup_teardown(test_default_tmp_cache_dir_is_checked, lt_test_setup, default_dir_teardown),
        LT_TEST(test_shell_metacharacters_are_literal),
        LT_TEST(test_compiler_words_are_split_like_shell),
        LT_TEST(test_unterminated_quote_is_reported),
        LT_TEST(test_hanging_version_probe_times_out),
        LT_TEST(test_hanging_compile_falls_back_to_interp),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    fmt(cmd, sizeof cmd, "rm -rf '%s'", test_dir); /* the test's own directory, a fixed mkdtemp name */
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", test_dir);
    return failed;
}
