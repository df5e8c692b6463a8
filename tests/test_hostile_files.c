/* test_hostile_files.c - bytes and files from outside: loads that fail
 * touch no tensor (also for destinations that cannot be written), IDX and
 * safetensors headers whose arithmetic overflows, paths that are not
 * regular files, and the temp files of saves: created exclusively, never
 * through a symlink, and removed by the next save when their writer died.
 * Loads run on cpu and on the lazy device with both backends. */
#include "lt_test.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* ---- helpers ----------------------------------------------------------------------------- */

static void make_tmpdir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/lt_test_hostile_XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static int compare_names(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* Names of the entries of dir (without . and ..), sorted, joined by ' '. */
static void list_dir(const char *dir, char *out, size_t cap)
{
    char names[32][256];
    int n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && n < 32)
            snprintf(names[n++], sizeof names[0], "%s", e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], compare_names);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        strncat(out, names[i], cap - strlen(out) - 1);
        if (i + 1 < n)
            strncat(out, " ", cap - strlen(out) - 1);
    }
}

/* Removes the entries of dir (one level) and dir itself. */
static void rm_tmpdir(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char path[512];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        assert_int_equal(unlink(path), 0);
    }
    closedir(d);
    assert_int_equal(rmdir(dir), 0);
}

static void write_whole(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void read_text(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = '\0';
    fclose(f);
}

/* A safetensors file with the given header text and data bytes. */
static void write_st(const char *path, const char *header, const void *data, size_t len)
{
    size_t hlen = strlen(header);
    unsigned char *buf = malloc(8 + hlen + len + 1);
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    memcpy(buf + 8, header, hlen);
    if (len)
        memcpy(buf + 8 + hlen, data, len);
    write_whole(path, buf, 8 + hlen + len);
    free(buf);
}

/* A pid that named a process which has exited and been reaped. */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return pid;
}

typedef void (*device_case)(lt_device dev);

/* Runs body in a scope of its own (nothing it leaves pending reaches
 * the next device's barriers). */
static void run_scoped(device_case body, lt_device dev)
{
    lt_scope_begin();
    body(dev);
    lt_scope_end();
}

/* Runs body on cpu, lazy + interp and lazy + cpu (compiled). */
static void on_every_device(device_case body)
{
    run_scoped(body, lt_device_cpu());
    static const char *const backends[] = {"interp", "cpu"};
    for (int b = 0; b < 2; b++) {
        if (lt_lazy_set_backend(backends[b]) != LT_OK) {
            print_message("lazy backend %s unavailable (%s): skipped\n", backends[b], lt_last_error());
            lt_clear_error();
            continue;
        }
        run_scoped(body, lt_device_parse("lazy"));
    }
    assert_int_equal(lt_lazy_set_backend("interp"), LT_OK);
}

/* ---- loads that fail touch nothing -------------------------------------------------------- */

static void expanded_destination_case(lt_device dev)
{
    char dir[64], path[128];
    make_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    lt_tensor *saved[2] = {LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6),
                           LT_T(LT_F32, LT_DIMS(2, 3), 10, 11, 12, 13, 14, 15)};
    const char *names[2] = {"a", "e"};
    assert_int_equal(lt_save_safetensors(path, saved, names, 2), LT_OK);

    lt_tensor *a = LT_OK_T(lt_full(LT_DIMS(2, 3), 7, LT_F32, dev));
    lt_tensor *base = LT_OK_T(lt_full(LT_DIMS(1, 3), 8, LT_F32, dev));
    lt_tensor *e = LT_OK_T(lt_expand(base, LT_DIMS(2, 3)));
    assert_int_equal(lt_load_safetensors(path, (lt_tensor *[]){a, e}, names, 2), LT_ERR_UNSUPPORTED);
    LT_EXPECT_ERROR(LT_ERR_UNSUPPORTED, "destination 1 (\"e\", shape [2, 3]) is an expanded view");
    LT_ASSERT_VALUES(a, 0, 7, 7, 7, 7, 7, 7);
    LT_ASSERT_VALUES(base, 0, 8, 8, 8);
    /* the same with the unwritable destination first */
    assert_int_equal(lt_load_safetensors(path, (lt_tensor *[]){e, a}, (const char *[]){"e", "a"}, 2),
                     LT_ERR_UNSUPPORTED);
    LT_EXPECT_ERROR(LT_ERR_UNSUPPORTED, "destination 0 (\"e\"");
    LT_ASSERT_VALUES(a, 0, 7, 7, 7, 7, 7, 7);
    /* a mismatch in the last destination leaves the first untouched too */
    lt_tensor *wrong = LT_OK_T(lt_zeros(LT_DIMS(3, 2), LT_F32, dev));
    assert_int_equal(lt_load_safetensors(path, (lt_tensor *[]){a, wrong}, names, 2), LT_ERR_SHAPE);
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "tensor \"e\" has shape [2, 3]");
    LT_ASSERT_VALUES(a, 0, 7, 7, 7, 7, 7, 7);
    /* with writable destinations (a strided view among them) it loads */
    lt_tensor *wide = LT_OK_T(lt_full(LT_DIMS(3, 2), 9, LT_F32, dev));
    lt_tensor *dst[2] = {a, LT_OK_T(lt_transpose(wide, 0, 1))};
    assert_int_equal(lt_load_safetensors(path, dst, names, 2), LT_OK);
    LT_ASSERT_VALUES(a, 0, 1, 2, 3, 4, 5, 6);
    LT_ASSERT_VALUES(wide, 0, 10, 13, 11, 14, 12, 15);
    rm_tmpdir(dir);
}

static void test_load_into_expanded_view_touches_nothing(void **state)
{
    (void)state;
    on_every_device(expanded_destination_case);
}

/* The in-place copy paths refuse before writing anything. */
static void copy_paths_case(lt_device dev)
{
    lt_tensor *base = LT_OK_T(lt_full(LT_DIMS(1, 3), 8, LT_F32, dev));
    lt_tensor *src = LT_T(LT_F32, LT_DIMS(2, 3), 1, 2, 3, 4, 5, 6);
    assert_null(lt_copy_(lt_expand(base, LT_DIMS(2, 3)), lt_to(src, dev)));
    LT_EXPECT_ERROR(LT_ERR_UNSUPPORTED, "expanded view");
    LT_ASSERT_VALUES(base, 0, 8, 8, 8);
    lt_tensor *dst = LT_OK_T(lt_full(LT_DIMS(2, 3), 7, LT_I32, dev));
    assert_null(lt_copy_(dst, lt_to(LT_T(LT_F32, LT_DIMS(4), 1, 2, 3, 4), dev)));
    LT_EXPECT_ERROR(LT_ERR_SHAPE, "copy_");
    lt_device other = dev.kind == LT_DEVICE_CPU ? lt_device_parse("lazy") : lt_device_cpu();
    assert_null(lt_copy_(dst, lt_to(src, other)));
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "copy_: mixed devices");
    LT_ASSERT_VALUES(dst, 0, 7, 7, 7, 7, 7, 7);
    int32_t host[6] = {-1, -1, -1, -1, -1, -1};
    assert_int_equal(lt_copy_to_host(dst, host, sizeof host - 1), LT_ERR_ARGUMENT);
    lt_clear_error();
    for (int i = 0; i < 6; i++)
        assert_int_equal(host[i], -1);
}

static void test_copy_paths_touch_nothing_on_error(void **state)
{
    (void)state;
    on_every_device(copy_paths_case);
}

/* ---- IDX headers ---------------------------------------------------------------------------- */

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* An IDX file: magic, dims, then len payload bytes (gzip if gz). */
static void write_idx(const char *path, bool gz, uint32_t magic, const uint32_t *dims, int ndim, size_t len)
{
    size_t total = 4 + 4 * (size_t)ndim + len;
    unsigned char *buf = calloc(1, total);
    put_be32(buf, magic);
    for (int i = 0; i < ndim; i++)
        put_be32(buf + 4 + 4 * i, dims[i]);
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, buf, (unsigned)total), (int)total);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        write_whole(path, buf, total);
    }
    free(buf);
}

static void expect_idx_error(const char *img, const char *lab, lt_status status, const char *needle)
{
    lt_dataset d;
    memset(&d, 0x5a, sizeof d);
    assert_int_equal(lt_dataset_load_idx(img, lab, &d), status);
    LT_EXPECT_ERROR(status, needle);
    assert_null(d.images);
    assert_null(d.labels);
    assert_int_equal(d.count, 0);
}

static void test_idx_overflowing_header(void **state)
{
    (void)state;
    char dir[64], img[128], imggz[128], lab[128], wide[128], tail[128];
    make_tmpdir(dir, sizeof dir);
    snprintf(img, sizeof img, "%s/img", dir);
    snprintf(imggz, sizeof imggz, "%s/img.gz", dir);
    snprintf(lab, sizeof lab, "%s/lab", dir);
    snprintf(wide, sizeof wide, "%s/wide", dir);
    snprintf(tail, sizeof tail, "%s/tail", dir);
    /* rows * cols = 9 * 2^60 overflows int64; times 16 it wraps to 0 */
    write_idx(img, false, 0x803, (const uint32_t[]){16, 3221225472u, 3221225472u}, 3, 0);
    write_idx(imggz, true, 0x803, (const uint32_t[]){16, 3221225472u, 3221225472u}, 3, 0);
    write_idx(lab, false, 0x801, (const uint32_t[]){16}, 1, 16);
    expect_idx_error(img, lab, LT_ERR_IO, "has absurd dims [16, 3221225472, 3221225472]");
    expect_idx_error(imggz, lab, LT_ERR_IO, "has absurd dims [16, 3221225472, 3221225472]");
    write_idx(wide, false, 0x803, (const uint32_t[]){4294967295u, 4294967295u, 4294967295u}, 3, 0);
    expect_idx_error(wide, lab, LT_ERR_IO, "absurd dims");
    /* a plain file is measured against its header before any allocation */
    write_idx(tail, false, 0x803, (const uint32_t[]){3, 2, 2}, 3, 112);
    expect_idx_error(tail, lab, LT_ERR_IO, "tail' is longer than expected: 28 bytes expected, 128 found");
    write_idx(tail, false, 0x803, (const uint32_t[]){1000000, 28, 28}, 3, 100);
    expect_idx_error(tail, lab, LT_ERR_IO, "tail' is truncated: expected 784000016 bytes, got 116");
    rm_tmpdir(dir);
}

/* A dataset struct is caller memory: its sizes are checked like a file's. */
static void test_dataset_struct_overflow(void **state)
{
    (void)state;
    uint8_t bytes[16] = {0};
    lt_dataset d = {16, 3221225472LL, 3221225472LL, bytes, bytes};
    int64_t perm[16];
    assert_int_equal(lt_dataset_shuffle(&d, 1, perm), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "count 16 x rows 3221225472 x cols 3221225472 overflows 64 bits");
    lt_tensor *images = NULL, *labels = NULL;
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 4, 0.5, 0.5, lt_device_cpu(), &images, &labels), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "overflows 64 bits");
    assert_null(images);
    assert_null(labels);
}

/* ---- safetensors headers and paths ----------------------------------------------------------- */

static void expect_st_error(const char *path, const char *name, lt_tensor *dst, lt_status status, const char *needle)
{
    assert_int_equal(lt_load_safetensors(path, &dst, &name, 1), status);
    LT_EXPECT_ERROR(status, needle);
}

static void test_safetensors_overflowing_header(void **state)
{
    (void)state;
    char dir[64], path[128];
    make_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/h.safetensors", dir);
    lt_tensor *x = LT_OK_T(lt_full(LT_DIMS(1), 7, LT_F32, lt_device_cpu()));
    /* 2^32 * 2^32 elements: the product overflows before the dtype size */
    write_st(path, "{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}}", NULL, 0);
    expect_st_error(path, "x", x, LT_ERR_IO, "needs more than 9223372036854775807 bytes");
    /* 2^61 elements fit, their bytes (times 4) do not */
    write_st(path, "{\"x\":{\"dtype\":\"F32\",\"shape\":[2305843009213693952],\"data_offsets\":[0,0]}}", NULL, 0);
    expect_st_error(path, "x", x, LT_ERR_IO, "needs more than 9223372036854775807 bytes");
    /* sizes that match but lie far past the end of the file */
    write_st(path, "{\"x\":{\"dtype\":\"U8\",\"shape\":[7],\"data_offsets\":[9223372036854775800,"
                   "9223372036854775807]}}", NULL, 0);
    expect_st_error(path, "x", x, LT_ERR_IO, "leave a gap");
    write_st(path, "{\"x\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,9223372036854775808]}}", NULL, 0);
    expect_st_error(path, "x", x, LT_ERR_IO, "an integer below 2^63");
    /* an entry with 0 elements and huge sizes is valid (and skipped) */
    const float one = 1.5f;
    write_st(path, "{\"z\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904,4611686018427387904,0],"
                   "\"data_offsets\":[0,0]},\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
             &one, sizeof one);
    assert_int_equal(lt_load_safetensors(path, &x, (const char *[]){"x"}, 1), LT_OK);
    LT_ASSERT_VALUES(x, 0, 1.5);
    rm_tmpdir(dir);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "load_safetensors blocked on a FIFO\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(2);
}

/* Opening a FIFO for reading blocks until a writer comes: the loader must
 * refuse anything but a regular file without blocking. */
static void test_safetensors_refuses_fifo_and_directory(void **state)
{
    (void)state;
    char dir[64], fifo[128];
    make_tmpdir(dir, sizeof dir);
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    lt_tensor *x = LT_OK_T(lt_zeros(LT_DIMS(1), LT_F32, lt_device_cpu()));
    signal(SIGALRM, on_alarm);
    alarm(20);
    expect_st_error(fifo, "x", x, LT_ERR_IO, "pipe' is not a regular file");
    expect_st_error(dir, "x", x, LT_ERR_IO, "is not a regular file");
    alarm(0);
    signal(SIGALRM, SIG_DFL);
    rm_tmpdir(dir);
}

/* ---- temp files of saves ---------------------------------------------------------------------- */

/* Temp files left by dead writers (here: made by hand with a reaped pid)
 * are removed by the next save into their directory; everything else stays:
 * live writers' files, near-miss names, symlinks, other files. */
static void test_save_removes_stale_temp_files(void **state)
{
    (void)state;
    char dir[64], path[128], p[1024], listing[1024], expected[1024];
    make_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    long dead = (long)dead_pid(), live = (long)getppid();
    const char *stale[] = {"model.safetensors.tmp.%ld.0123456789abcdef", "other.bin.tmp.%ld.fedcba9876543210"};
    for (int i = 0; i < 2; i++) {
        char name[128];
        snprintf(name, sizeof name, stale[i], dead);
        snprintf(p, sizeof p, "%s/%s", dir, name);
        write_whole(p, "partial", 7);
    }
    char kept[5][128];
    snprintf(kept[0], sizeof kept[0], "model.safetensors.tmp.%ld.0123456789abcdef", live);
    snprintf(kept[1], sizeof kept[1], "model.safetensors.tmp.%ld.0123456789ABCDEF", dead);
    snprintf(kept[2], sizeof kept[2], "model.safetensors.tmp.%ld.0123456789abcde", dead);
    snprintf(kept[3], sizeof kept[3], "tmp.%ld.0123456789abcdef", dead);
    snprintf(kept[4], sizeof kept[4], "notes.txt");
    for (int i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, kept[i]);
        write_whole(p, "keep", 4);
    }
    char link[256], target[128];
    snprintf(target, sizeof target, "%s/notes.txt", dir);
    snprintf(link, sizeof link, "%s/x.tmp.%ld.00000000deadbeef", dir, dead);
    assert_int_equal(symlink(target, link), 0);

    lt_tensor *t = LT_T(LT_F32, LT_DIMS(2), 1, 2);
    assert_int_equal(lt_save_safetensors(path, &t, (const char *[]){"t"}, 1), LT_OK);
    list_dir(dir, listing, sizeof listing);
    char sorted[7][128];
    memcpy(sorted, kept, sizeof kept);
    snprintf(sorted[5], sizeof sorted[5], "model.safetensors");
    snprintf(sorted[6], sizeof sorted[6], "x.tmp.%ld.00000000deadbeef", dead);
    qsort(sorted, 7, sizeof sorted[0], compare_names);
    expected[0] = '\0';
    for (int i = 0; i < 7; i++) {
        strcat(expected, sorted[i]);
        if (i < 6)
            strcat(expected, " ");
    }
    assert_string_equal(listing, expected);
    char text[16];
    read_text(target, text, sizeof text);
    assert_string_equal(text, "keep");
    rm_tmpdir(dir);
}

/* True once dir holds a temp file of `target` (any name that extends it). */
static bool has_temp_of(const char *dir, const char *target)
{
    DIR *d = opendir(dir);
    bool found = false;
    size_t n = strlen(target);
    for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;)
        found = strncmp(e->d_name, target, n) == 0 && e->d_name[n] == '.';
    if (d)
        closedir(d);
    return found;
}

/* Forks a writer that saves a 64 MB tensor over and over and kills it
 * (SIGKILL) while a temp file of its save exists. True if one was left. */
static bool kill_writer_mid_save(const char *dir, const char *path)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        lt_tensor *big = lt_empty((const int64_t[]){16 << 20}, 1, LT_F32, lt_device_cpu());
        for (;;)
            if (!big || lt_save_safetensors(path, &big, (const char *[]){"big"}, 1) != LT_OK)
                _exit(1);
    }
    struct timespec pause = {0, 100000};
    for (int i = 0; i < 200000 && !has_temp_of(dir, "big.safetensors"); i++)
        nanosleep(&pause, NULL);
    kill(pid, SIGKILL);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    return has_temp_of(dir, "big.safetensors");
}

static void test_killed_save_is_cleaned_by_next_save(void **state)
{
    (void)state;
    char dir[64], big[128], small[128], listing[1024];
    make_tmpdir(dir, sizeof dir);
    snprintf(big, sizeof big, "%s/big.safetensors", dir);
    snprintf(small, sizeof small, "%s/small.safetensors", dir);
    bool left = false;
    for (int attempt = 0; attempt < 10 && !left; attempt++)
        left = kill_writer_mid_save(dir, big);
    assert_true(left);
    lt_tensor *t = LT_T(LT_I64, LT_DIMS(3), 1, 2, 3);
    assert_int_equal(lt_save_safetensors(small, &t, (const char *[]){"t"}, 1), LT_OK);
    list_dir(dir, listing, sizeof listing);
    /* big.safetensors exists only if one save completed before the kill */
    if (strcmp(listing, "small.safetensors") != 0)
        assert_string_equal(listing, "big.safetensors small.safetensors");
    lt_tensor *back = LT_OK_T(lt_zeros(LT_DIMS(3), LT_I64, lt_device_cpu()));
    assert_int_equal(lt_load_safetensors(small, &back, (const char *[]){"t"}, 1), LT_OK);
    LT_ASSERT_VALUES(back, 0, 1, 2, 3);
    rm_tmpdir(dir);
}

/* A symlink planted where a predictable temp name would be cannot
 * redirect the write, and the checkpoint is created with mode 0644. */
static void test_save_never_writes_through_symlinks(void **state)
{
    (void)state;
    char dir[64], path[128], victim[128], link[256], text[64];
    make_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    write_whole(victim, "precious", 8);
    snprintf(link, sizeof link, "%s.tmp.%ld", path, (long)getpid());
    assert_int_equal(symlink(victim, link), 0);
    lt_tensor *t = LT_T(LT_F32, LT_DIMS(2), 1, 2);
    mode_t old = umask(0);
    lt_status st = lt_save_safetensors(path, &t, (const char *[]){"t"}, 1);
    umask(old);
    assert_int_equal(st, LT_OK);
    read_text(victim, text, sizeof text);
    assert_string_equal(text, "precious");
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0644);
    lt_tensor *back = LT_OK_T(lt_zeros(LT_DIMS(2), LT_F32, lt_device_cpu()));
    assert_int_equal(lt_load_safetensors(path, &back, (const char *[]){"t"}, 1), LT_OK);
    LT_ASSERT_VALUES(back, 0, 1, 2);
    rm_tmpdir(dir);
}

int main(void)
{
    /* compiled programs go to ctest's cache dir or a private one, never
     * to ~/.cache */
    char dir[] = "/tmp/lt_hostile_cache_XXXXXX";
    bool own_cache = !getenv("LT_CACHE_DIR");
    if (own_cache && !mkdtemp(dir))
        return 1;
    if (own_cache)
        setenv("LT_CACHE_DIR", dir, 1);
    const struct CMUnitTest tests[] = {
        /* first: the forked writer must not inherit a running OpenMP pool */
        LT_TEST(test_killed_save_is_cleaned_by_next_save),
        LT_TEST(test_save_removes_stale_temp_files),
        LT_TEST(test_save_never_writes_through_symlinks),
        LT_TEST(test_load_into_expanded_view_touches_nothing),
        LT_TEST(test_copy_paths_touch_nothing_on_error),
        LT_TEST(test_idx_overflowing_header),
        LT_TEST(test_dataset_struct_overflow),
        LT_TEST(test_safetensors_overflowing_header),
        LT_TEST(test_safetensors_refuses_fifo_and_directory),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (own_cache && system(cmd) != 0)
        failed++;
    return failed;
}
