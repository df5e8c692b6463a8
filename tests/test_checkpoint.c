/* test_checkpoint.c - safetensors save/load: bit-exact round trips for
 * every dtype on cpu and lazy, the file layout, strict validation of
 * damaged or mismatched files (destinations untouched), atomic writes, and
 * a cross-check of the written file by PyTorch (tests/safetensors_torch_check.py)
 * when python3-torch is installed. */
#include "lt_test.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------------- */

static void make_tmpdir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/lt_test_ckpt_XXXXXX");
    assert_non_null(mkdtemp(dir));
}

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
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        strncat(out, names[i], cap - strlen(out) - 1);
        if (i + 1 < n)
            strncat(out, " ", cap - strlen(out) - 1);
    }
}

/* Removes the files of dir (one level) and dir itself. */
static void rm_tmpdir(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    char path[512];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0)
            rmdir(path);
    }
    closedir(d);
    assert_int_equal(rmdir(dir), 0);
}

static unsigned char *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static void write_whole(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Writes a hand-made safetensors file: length prefix hlen (normally
 * strlen(header)), the header text and `len` data bytes. */
static void write_st_len(const char *path, uint64_t hlen, const char *header, const void *data, size_t len)
{
    size_t htext = strlen(header);
    unsigned char *buf = malloc(8 + htext + len);
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char)(hlen >> (8 * i));
    memcpy(buf + 8, header, htext);
    if (len)
        memcpy(buf + 8 + htext, data, len);
    write_whole(path, buf, 8 + htext + len);
    free(buf);
}

static void write_st(const char *path, const char *header, const void *data, size_t len)
{
    write_st_len(path, strlen(header), header, data, len);
}

/* Host bytes of t (malloc'd). */
static unsigned char *host_bytes(lt_tensor *t, size_t *n)
{
    *n = (size_t)lt_tensor_numel(t) * lt_dtype_size(lt_tensor_dtype(t));
    unsigned char *buf = malloc(*n + 1);
    assert_int_equal(lt_copy_to_host(t, buf, *n), LT_OK);
    return buf;
}

static void assert_same_bytes(lt_tensor *a, lt_tensor *b)
{
    size_t na, nb;
    unsigned char *x = host_bytes(a, &na), *y = host_bytes(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(x, y, na);
    free(x);
    free(y);
}

/* ---- the sample tensors: every dtype, with awkward values ------------------------------- */

enum { NSAMPLE = 12 };
static const char *const sample_names[NSAMPLE] = {"f32", "f64", "i32", "i64", "u8", "bool", "bf16", "f16",
                                                  "scalar", "empty", "transposed", "layer.0.weight"};

/* Fills ts with the sample tensors on dev. */
static void make_samples(lt_device dev, lt_tensor **ts)
{
    const float f32[6] = {1.5f, -0.0f, INFINITY, NAN, 1e-45f, -3.4028235e38f};
    const double f64[4] = {1.0 / 3.0, -2.5e-310, -INFINITY, 1e300};
    const int32_t i32[3] = {INT32_MIN, -1, INT32_MAX};
    const int64_t i64[2] = {INT64_MIN, 1234567890123LL};
    const uint8_t u8[5] = {0, 1, 127, 128, 255};
    const bool b[4] = {true, false, false, true};
    /* raw bit patterns: 1.0, -2.0, +inf, a NaN with payload, a subnormal */
    const uint16_t bf16[5] = {0x3f80, 0xc000, 0x7f80, 0x7fc1, 0x0001};
    const uint16_t f16[5] = {0x3c00, 0xc000, 0x7c00, 0x7e01, 0x0001};
    const float one = 42.25f;
    ts[0] = LT_OK_T(lt_from_data(f32, LT_DIMS(2, 3), LT_F32, dev));
    ts[1] = LT_OK_T(lt_from_data(f64, LT_DIMS(2, 1, 2), LT_F64, dev));
    ts[2] = LT_OK_T(lt_from_data(i32, LT_DIMS(3), LT_I32, dev));
    ts[3] = LT_OK_T(lt_from_data(i64, LT_DIMS(2), LT_I64, dev));
    ts[4] = LT_OK_T(lt_from_data(u8, LT_DIMS(5, 1), LT_U8, dev));
    ts[5] = LT_OK_T(lt_from_data(b, LT_DIMS(2, 2), LT_BOOL, dev));
    ts[6] = LT_OK_T(lt_from_data(bf16, LT_DIMS(5), LT_BF16, dev));
    ts[7] = LT_OK_T(lt_from_data(f16, LT_DIMS(5), LT_F16, dev));
    ts[8] = LT_OK_T(lt_from_data(&one, NULL, 0, LT_F32, dev));
    ts[9] = LT_OK_T(lt_zeros(LT_DIMS(0, 3), LT_F32, dev));
    /* a non-contiguous view (values 0..11 transposed) */
    ts[10] = LT_OK_T(lt_transpose(lt_reshape(lt_arange(0, 12, 1, LT_I64, dev), LT_DIMS(3, 4)), 0, 1));
    ts[11] = LT_OK_T(lt_full(LT_DIMS(4, 2), -0.75, LT_F32, dev));
}

/* Destinations with the samples' shapes and dtypes, filled with 7. */
static void make_destinations(lt_device dev, lt_tensor *const *samples, lt_tensor **dst)
{
    for (int i = 0; i < NSAMPLE; i++)
        dst[i] = LT_OK_T(lt_full(lt_tensor_shape(samples[i]), lt_tensor_ndim(samples[i]), 7.0,
                                 lt_tensor_dtype(samples[i]), dev));
}

static void round_trip(lt_device save_dev, lt_device load_dev)
{
    char dir[64], path[128], listing[512];
    make_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    lt_tensor *src[NSAMPLE], *dst[NSAMPLE];
    make_samples(save_dev, src);
    assert_int_equal(lt_save_safetensors(path, src, sample_names, NSAMPLE), LT_OK);
    make_destinations(load_dev, src, dst);
    assert_int_equal(lt_load_safetensors(path, dst, sample_names, NSAMPLE), LT_OK);
    for (int i = 0; i < NSAMPLE; i++) {
        assert_int_equal(lt_tensor_device(dst[i]).kind, load_dev.kind);
        assert_same_bytes(src[i], dst[i]);
    }
    /* independent spot checks of the values */
    LT_ASSERT_VALUES(dst[10], 0, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
    LT_ASSERT_VALUES(dst[8], 0, 42.25);
    LT_ASSERT_VALUES(dst[6], 0, 1.0, -2.0, INFINITY, NAN, 9.183549615799121e-41);
    /* loading a subset, in another order, works too */
    lt_tensor *two[2] = {LT_OK_T(lt_zeros(LT_DIMS(2), LT_I64, load_dev)),
                         LT_OK_T(lt_zeros(LT_DIMS(3), LT_I32, load_dev))};
    assert_int_equal(lt_load_safetensors(path, two, (const char *const[]){"i64", "i32"}, 2), LT_OK);
    LT_ASSERT_VALUES(two[1], 0, INT32_MIN, -1, INT32_MAX);
    list_dir(dir, listing, sizeof listing);
    assert_string_equal(listing, "model.safetensors"); /* no temp file left */
    rm_tmpdir(dir);
}

static void test_round_trip_cpu(void **state)
{
    (void)state;
    round_trip(lt_device_cpu(), lt_device_cpu());
}

static void test_round_trip_lazy(void **state)
{
    (void)state;
    lt_device lazy = lt_device_parse("lazy");
    assert_int_equal(lazy.kind, LT_DEVICE_LAZY);
    round_trip(lazy, lazy);
    round_trip(lazy, lt_device_cpu());
    round_trip(lt_device_cpu(), lazy);
}

/* Pending lazy results (not yet computed) are synced when saved, and a
 * lazy destination view receives the loaded values. */
static void test_lazy_pending_and_views(void **state)
{
    (void)state;
    lt_device lazy = lt_device_parse("lazy");
    char dir[64], path[128];
    make_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/x.safetensors", dir);
    lt_tensor *a = lt_arange(0, 6, 1, LT_F32, lazy);
    lt_tensor *sum = lt_add_scalar(lt_mul_scalar(a, 2.0), 0.5); /* pending IR */
    assert_int_equal(lt_save_safetensors(path, &sum, (const char *const[]){"y"}, 1), LT_OK);
    lt_tensor *base = LT_OK_T(lt_zeros(LT_DIMS(2, 6), LT_F32, lazy));
    lt_tensor *row = LT_OK_T(lt_select(base, 0, 1));
    assert_int_equal(lt_load_safetensors(path, &row, (const char *const[]){"y"}, 1), LT_OK);
    LT_ASSERT_VALUES(base, 0, 0, 0, 0, 0, 0, 0, 0.5, 2.5, 4.5, 6.5, 8.5, 10.5);
    /* and on cpu: a strided destination view */
    lt_tensor *cbase = LT_OK_T(lt_zeros(LT_DIMS(6, 2), LT_F32, lt_device_cpu()));
    lt_tensor *col = LT_OK_T(lt_select(cbase, 1, 0));
    assert_int_equal(lt_load_safetensors(path, &col, (const char *const[]){"y"}, 1), LT_OK);
    LT_ASSERT_VALUES(cbase, 0, 0.5, 0, 2.5, 0, 4.5, 0, 6.5, 0, 8.5, 0, 10.5, 0);
    rm_tmpdir(dir);
}

/* ---- layout ------------------------------------------------------------------------------ */

static void test_file_layout(void **state)
{
    (void)state;
    char dir[64], path[128];
    make_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/w.safetensors", dir);
    lt_tensor *w = lt_mul_scalar(lt_reshape(lt_arange(0, 12, 1, LT_F32, lt_device_cpu()), LT_DIMS(3, 4)), 0.5);
    lt_tensor *b = LT_T(LT_I64, LT_DIMS(2), -1, 2);
    lt_tensor *s = lt_scalar(3, LT_U8, lt_device_cpu());
    lt_tensor *ts[3] = {w, b, s};
    const char *names[3] = {"w", "b", "odd \"name\"\\\n"};
    assert_int_equal(lt_save_safetensors(path, ts, names, 3), LT_OK);
    size_t len;
    unsigned char *buf = read_whole(path, &len);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | buf[i];
    assert_int_equal(n % 8, 0);
    assert_int_equal(len, 8 + n + 48 + 16 + 1);
    char *header = calloc(1, n + 1);
    memcpy(header, buf + 8, n);
    assert_int_equal(header[0], '{');
    assert_non_null(strstr(header, "\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]}"));
    assert_non_null(strstr(header, "\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[48,64]}"));
    assert_non_null(
        strstr(header, "\"odd \\\"name\\\"\\\\\\u000a\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[64,65]}"));
    /* padding: only spaces after the closing brace */
    char *end = strrchr(header, '}');
    for (char *p = end + 1; *p; p++)
        assert_int_equal(*p, ' ');
    assert_true(end + 1 + 8 > header + n);
    /* the data: w's floats, b's int64s, s's byte */
    const unsigned char *data = buf + 8 + n;
    for (int i = 0; i < 12; i++) {
        float v;
        memcpy(&v, data + 4 * i, 4);
        assert_true(v == 0.5f * (float)i);
    }
    int64_t b1;
    memcpy(&b1, data + 48 + 8, 8);
    assert_int_equal(b1, 2);
    assert_int_equal(data[64], 3);
    /* the odd name loads back */
    lt_tensor *d = lt_zeros(NULL, 0, LT_U8, lt_device_cpu());
    assert_int_equal(lt_load_safetensors(path, &d, &names[2], 1), LT_OK);
    LT_ASSERT_VALUES(d, 0, 3);
    free(header);
    free(buf);
    /* an empty checkpoint is valid: "{}" padded to 8 bytes */
    assert_int_equal(lt_save_safetensors(path, NULL, NULL, 0), LT_OK);
    buf = read_whole(path, &len);
    assert_int_equal(len, 16);
    assert_memory_equal(buf, "\x08\0\0\0\0\0\0\0{}      ", 16);
    free(buf);
    assert_int_equal(lt_load_safetensors(path, NULL, NULL, 0), LT_OK);
    assert_int_equal(lt_load_safetensors(path, &d, &names[2], 1), LT_ERR_IO);
    LT_EXPECT_ERROR(LT_ERR_IO, "has no tensor named \"odd");
    rm_tmpdir(dir);
}

/* Files written by other tools: metadata, whitespace, escapes, another key
 * order, an unpadded header, and dtypes lazytensor lacks (skipped). */
static void test_load_foreign_files(void **state)
{
    (void)state;
    char dir[64], path[128];
    make_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/f.safetensors", dir);
    const float data[3] = {1.0f, 2.0f, 3.0f};
    unsigned char bytes[14];
    memcpy(bytes, data, 12);
    bytes[12] = 0xfe; /* an I8 tensor of 2 elements */
    bytes[13] = 0x01;
    const char *header = " {\n  \"__metadata__\": {\"format\": \"pt\", \"note\": \"a \\\"quoted\\\" \\u00e9\"},\n"
                         "  \"q\" : {\"data_offsets\": [12, 14], \"shape\": [2], \"dtype\": \"I8\"},\n"
                         "  \"caf\\u00e9\\ud83d\\ude00\\/x\": "
                         "{\"shape\":[3],\"dtype\":\"F32\",\"data_offsets\":[0,12]}\n"
                         "}\t\r\n";
    write_st(path, header, bytes, sizeof bytes);
    lt_tensor *t = lt_zeros(LT_DIMS(3), LT_F32, lt_device_cpu());
    const char *name = "caf\xc3\xa9\xf0\x9f\x98\x80/x";
    assert_int_equal(lt_load_safetensors(path, &t, &name, 1), LT_OK);
    LT_ASSERT_VALUES(t, 0, 1, 2, 3);
    /* the I8 tensor cannot be loaded into any lazytensor dtype */
    lt_tensor *q = lt_zeros(LT_DIMS(2), LT_U8, lt_device_cpu());
    assert_int_equal(lt_load_safetensors(path, &q, (const char *const[]){"q"}, 1), LT_ERR_DTYPE);
    LT_EXPECT_ERROR(LT_ERR_DTYPE, "tensor \"q\" is I8 in");
    rm_tmpdir(dir);
}

/* ---- damaged and mismatched files ------------------------------------------------------- */

typedef struct fixture {
    char dir[64], good[128], bad[128];
    lt_tensor *dst[2];
    const char *names[2];
} fixture;

/* A good file with "w" f32 [3, 4] and "b" i64 [2], and destinations for
 * both, filled with 7. */
static void fixture_init(fixture *fx, lt_device dev)
{
    make_tmpdir(fx->dir, sizeof fx->dir);
    snprintf(fx->good, sizeof fx->good, "%s/good.safetensors", fx->dir);
    snprintf(fx->bad, sizeof fx->bad, "%s/bad.safetensors", fx->dir);
    lt_tensor *ts[2] = {lt_reshape(lt_arange(0, 12, 1, LT_F32, lt_device_cpu()), LT_DIMS(3, 4)),
                        LT_T(LT_I64, LT_DIMS(2), -1, 2)};
    fx->names[0] = "w";
    fx->names[1] = "b";
    assert_int_equal(lt_save_safetensors(fx->good, ts, fx->names, 2), LT_OK);
    fx->dst[0] = lt_full(LT_DIMS(3, 4), 7, LT_F32, dev);
    fx->dst[1] = lt_full(LT_DIMS(2), 7, LT_I64, dev);
}

/* Loads fx->bad into the destinations, expecting failure, and checks that
 * nothing was written. */
#define EXPECT_LOAD_FAILS(fx, status, needle) expect_load_fails((fx), (status), (needle), __LINE__)
static void expect_load_fails(fixture *fx, lt_status status, const char *needle, int line)
{
    lt_status st = lt_load_safetensors(fx->bad, fx->dst, fx->names, 2);
    if (st != status || !strstr(lt_last_error(), needle))
        fail_msg("line %d: expected %s containing \"%s\", got %s: \"%s\"", line, lt_status_name(status), needle,
                 lt_status_name(st), lt_last_error());
    lt_clear_error();
    LT_ASSERT_VALUES(fx->dst[0], 0, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7);
    LT_ASSERT_VALUES(fx->dst[1], 0, 7, 7);
}

static void test_truncated_and_bad_length(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx, lt_device_cpu());
    size_t len;
    unsigned char *good = read_whole(fx.good, &len);
    /* data cut short by one byte, and by everything after the header */
    write_whole(fx.bad, good, len - 1);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "is truncated: tensor \"b\" data_offsets [48, 64] are out of range of the 63");
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | good[i];
    write_whole(fx.bad, good, 8 + n);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "truncated");
    /* header cut */
    write_whole(fx.bad, good, 8 + n / 2);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "is truncated (or not a safetensors file): header of");
    write_whole(fx.bad, good, 5);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "is truncated: 5 bytes, expected at least 8");
    write_whole(fx.bad, good, 0);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "is truncated: 0 bytes");
    /* not safetensors files at all: text, and a gzip header read as a length */
    write_whole(fx.bad, "hello world, not a checkpoint\n", 30);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "corrupt (not a safetensors file?): header length");
    write_whole(fx.bad, "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage", 18);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "truncated (or not a safetensors file): header of 559903 bytes but the file "
                                      "has 18 bytes");
    /* a length of 1, and one beyond 100 MB */
    write_st_len(fx.bad, 1, "{}", NULL, 0);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "header length 1, expected 2 to 104857600 bytes");
    write_st_len(fx.bad, (uint64_t)200 << 20, "{}", NULL, 0);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "header length 209715200");
    /* trailing bytes after the data */
    unsigned char *longer = malloc(len + 4);
    memcpy(longer, good, len);
    memset(longer + len, 0, 4);
    write_whole(fx.bad, longer, len + 4);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "is corrupt: 68 data bytes, but the header describes 64");
    free(longer);
    free(good);
    /* a missing file, and a directory */
    snprintf(fx.bad, sizeof fx.bad, "%s/nothing.safetensors", fx.dir);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "cannot open '");
    snprintf(fx.bad, sizeof fx.bad, "%s", fx.dir);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "is not a regular file");
    rm_tmpdir(fx.dir);
}

/* Headers that are not valid JSON of the expected form: all "corrupt". */
static void test_corrupt_headers(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx, lt_device_cpu());
    static const struct {
        const char *header, *needle;
    } cases[] = {
        {"garbage!", "bad JSON header at byte 0: expected '{' at the start"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]}", "expected ',' or '}' in the header"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]},}", "expected a string"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[3.0,4],\"data_offsets\":[0,48]}}", "no fraction or exponent"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[3,-4],\"data_offsets\":[0,48]}}", "a non-negative integer"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[03,4],\"data_offsets\":[0,48]}}", "without leading zeros"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,48]}}", "below 2^63"},
        {"{\"w\":{\"dtype\":\"F33\",\"shape\":[3,4],\"data_offsets\":[0,48]}}", "a known dtype name"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4]}}", "dtype, shape and data_offsets in every tensor entry"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48],\"x\":1}}", "only the keys"},
        {"{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]}}", "once each"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48,2]}}", "fewer array entries"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0]}}", "data_offsets with 2 entries"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]}} x", "nothing after the header"},
        {"{\"w\\q\":{}}", "a valid escape sequence"},
        {"{\"w\\ud800\":{}}", "a low surrogate after a high surrogate"},
        {"{\"w\\udc00\":{}}", "no lone low surrogate"},
        {"{\"w\\u00zz\":{}}", "4 hex digits"},
        {"{\"w\\u0000\":{}}", "no \\u0000 in strings"},
        {"{\"w\n\":{}}", "no raw control characters"},
        {"{\"w", "a closing quote"},
        {"{\"w\":[1,2]}", "an object for a tensor entry"},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]},\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],"
         "\"data_offsets\":[0,48]}}",
         "tensor \"w\" appears more than once"},
        {"{\"__metadata__\":{\"a\":1}}", "expected a string"},
        {"{\"__metadata__\":{},\"__metadata__\":{}}", "a single __metadata__"},
        {"{\"w\" {}}", "':' after a key"},
        {"{\"w\":{\"dtype\":F32}}", "expected a string"},
        {"[]", "'{' at the start"},
    };
    const unsigned char data[64] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_st(fx.bad, cases[i].header, data, sizeof data);
        lt_status st = lt_load_safetensors(fx.bad, fx.dst, fx.names, 2);
        if (st != LT_ERR_IO || !strstr(lt_last_error(), "is corrupt") || !strstr(lt_last_error(), cases[i].needle))
            fail_msg("case %zu (%s): expected a corrupt error with \"%s\", got %s: \"%s\"", i, cases[i].header,
                     cases[i].needle, lt_status_name(st), lt_last_error());
        lt_clear_error();
    }
    LT_ASSERT_VALUES(fx.dst[0], 0, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7);
    LT_ASSERT_VALUES(fx.dst[1], 0, 7, 7);
    rm_tmpdir(fx.dir);
}

static void test_bad_offsets(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx, lt_device_cpu());
    unsigned char data[64];
    memset(data, 0x11, sizeof data);
    /* b's range lies beyond the data present */
    write_st(fx.bad,
             "{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]},"
             "\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[48,64]}}",
             data, 48);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "tensor \"b\" data_offsets [48, 64] are out of range of the 48 data bytes");
    /* b overlaps w */
    write_st(fx.bad,
             "{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]},"
             "\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[40,56]}}",
             data, 64);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "tensor \"b\" data_offsets [40, 56] overlap another tensor");
    /* a gap before b */
    write_st(fx.bad,
             "{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,48]},"
             "\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[52,68]}}",
             data, 64);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "data_offsets [52, 68] leave a gap (expected it to start at byte 48)");
    /* a range whose size does not match dtype and shape */
    write_st(fx.bad,
             "{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[0,40]},"
             "\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[40,56]}}",
             data, 56);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO,
                      "tensor \"w\" has data_offsets [0, 40] but dtype F32 shape [3, 4] needs 48 bytes");
    write_st(fx.bad,
             "{\"w\":{\"dtype\":\"F32\",\"shape\":[3,4],\"data_offsets\":[48,0]},"
             "\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[48,64]}}",
             data, 64);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "data_offsets [48, 0]");
    /* a shape whose byte size overflows */
    write_st(fx.bad, "{\"w\":{\"dtype\":\"F64\",\"shape\":[4611686018427387904,4],\"data_offsets\":[0,8]}}", data,
             8);
    EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "needs more than");
    rm_tmpdir(fx.dir);
}

static void test_name_shape_dtype_mismatch(void **state)
{
    (void)state;
    lt_device devs[2] = {lt_device_cpu(), lt_device_parse("lazy")};
    for (int k = 0; k < 2; k++) {
        fixture fx;
        fixture_init(&fx, devs[k]);
        snprintf(fx.bad, sizeof fx.bad, "%s", fx.good);
        /* missing name */
        fx.names[1] = "bias";
        EXPECT_LOAD_FAILS(&fx, LT_ERR_IO, "good.safetensors' has no tensor named \"bias\"");
        fx.names[1] = "b";
        /* shape mismatch in the second tensor: the first stays untouched */
        lt_tensor *right = fx.dst[1];
        fx.dst[1] = lt_full(LT_DIMS(1, 2), 7, LT_I64, devs[k]);
        EXPECT_LOAD_FAILS(&fx, LT_ERR_SHAPE, "tensor \"b\" has shape [2] in '");
        EXPECT_LOAD_FAILS(&fx, LT_ERR_SHAPE, "but the destination has shape [1, 2]");
        /* dtype mismatch */
        fx.dst[1] = lt_full(LT_DIMS(2), 7, LT_I32, devs[k]);
        EXPECT_LOAD_FAILS(&fx, LT_ERR_DTYPE, "tensor \"b\" is I64 in '");
        EXPECT_LOAD_FAILS(&fx, LT_ERR_DTYPE, "but the destination is I32");
        fx.dst[1] = lt_full(LT_DIMS(2), 7, LT_F64, devs[k]);
        EXPECT_LOAD_FAILS(&fx, LT_ERR_DTYPE, "destination is F64");
        /* with the right destinations everything loads */
        fx.dst[1] = right;
        assert_int_equal(lt_load_safetensors(fx.good, fx.dst, fx.names, 2), LT_OK);
        LT_ASSERT_VALUES(fx.dst[0], 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
        LT_ASSERT_VALUES(fx.dst[1], 0, -1, 2);
        rm_tmpdir(fx.dir);
    }
}

static void test_load_bad_arguments(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx, lt_device_cpu());
    assert_int_equal(lt_load_safetensors(NULL, fx.dst, fx.names, 2), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "load_safetensors: path is NULL");
    assert_int_equal(lt_load_safetensors(fx.good, fx.dst, fx.names, -1), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "n = -1");
    assert_int_equal(lt_load_safetensors(fx.good, NULL, fx.names, 2), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "tensors array is NULL");
    assert_int_equal(lt_load_safetensors(fx.good, fx.dst, NULL, 2), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "names array is NULL");
    lt_tensor *with_null[2] = {fx.dst[0], NULL};
    assert_int_equal(lt_load_safetensors(fx.good, with_null, fx.names, 2), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "argument 1 is NULL");
    assert_int_equal(lt_load_safetensors(fx.good, fx.dst, (const char *const[]){"w", NULL}, 2), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "name 1 is NULL");
    LT_ASSERT_VALUES(fx.dst[0], 0, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7);
    rm_tmpdir(fx.dir);
}

/* ---- saving: atomicity and failures ------------------------------------------------------ */

static void test_save_atomic_and_failures(void **state)
{
    (void)state;
    char dir[64], path[128], listing[512];
    make_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ckpt.safetensors", dir);
    lt_tensor *a = LT_T(LT_F32, LT_DIMS(2), 1, 2);
    lt_tensor *b = LT_T(LT_F32, LT_DIMS(2), 3, 4);
    const char *name = "x";
    assert_int_equal(lt_save_safetensors(path, &a, &name, 1), LT_OK);
    /* overwriting replaces the file */
    assert_int_equal(lt_save_safetensors(path, &b, &name, 1), LT_OK);
    list_dir(dir, listing, sizeof listing);
    assert_string_equal(listing, "ckpt.safetensors");
    lt_tensor *d = lt_zeros(LT_DIMS(2), LT_F32, lt_device_cpu());
    assert_int_equal(lt_load_safetensors(path, &d, &name, 1), LT_OK);
    LT_ASSERT_VALUES(d, 0, 3, 4);
    /* the target is a directory: the rename fails, the temp file goes away */
    char sub[128];
    snprintf(sub, sizeof sub, "%s/subdir", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(lt_save_safetensors(sub, &a, &name, 1), LT_ERR_IO);
    LT_EXPECT_ERROR(LT_ERR_IO, "cannot rename '");
    list_dir(dir, listing, sizeof listing);
    assert_string_equal(listing, "ckpt.safetensors subdir");
    /* a directory that does not exist */
    assert_int_equal(lt_save_safetensors("/nonexistent_lt_dir/ckpt.safetensors", &a, &name, 1), LT_ERR_IO);
    LT_EXPECT_ERROR(LT_ERR_IO, "cannot create '/nonexistent_lt_dir/ckpt.safetensors.tmp.");
    /* a failed save leaves the previous file intact */
    assert_int_equal(lt_load_safetensors(path, &d, &name, 1), LT_OK);
    LT_ASSERT_VALUES(d, 0, 3, 4);
    rm_tmpdir(dir);
}

static void test_save_bad_arguments(void **state)
{
    (void)state;
    lt_tensor *ts[2] = {LT_T(LT_F32, LT_DIMS(1), 1), LT_T(LT_F32, LT_DIMS(1), 2)};
    const char *path = "/tmp/lt_never_written.safetensors";
    assert_int_equal(lt_save_safetensors(NULL, ts, (const char *const[]){"a", "b"}, 2), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "save_safetensors: path is NULL");
    assert_int_equal(lt_save_safetensors(path, ts, (const char *const[]){"a", "a"}, 2), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "name \"a\" appears more than once");
    assert_int_equal(lt_save_safetensors(path, ts, (const char *const[]){"a", ""}, 2), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "name 1 is empty");
    assert_int_equal(lt_save_safetensors(path, ts, (const char *const[]){NULL, "b"}, 2), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "name 0 is NULL");
    assert_int_equal(lt_save_safetensors(path, ts, (const char *const[]){"__metadata__", "b"}, 2), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "\"__metadata__\" is reserved");
    assert_int_equal(lt_save_safetensors(path, ts, NULL, 2), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "names array is NULL");
    assert_int_equal(lt_save_safetensors(path, ts, (const char *const[]){"a", "b"}, -2), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "n = -2");
    lt_tensor *with_null[2] = {ts[0], NULL};
    assert_int_equal(lt_save_safetensors(path, with_null, (const char *const[]){"a", "b"}, 2), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "argument 1 is NULL");
    assert_int_equal(access(path, F_OK), -1); /* nothing was written */
}

/* ---- PyTorch cross-check ---------------------------------------------------------------- */

/* The directory of this source file, where safetensors_torch_check.py lives. */
static void tests_dir(char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", __FILE__);
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(buf, cap, ".");
}

/* Saves the tensors the script expects (see its docstring); `wrong` makes
 * one value differ. */
static void save_torch_sample(const char *path, bool wrong)
{
    lt_device cpu = lt_device_cpu();
    lt_tensor *w = lt_mul_scalar(lt_reshape(lt_arange(0, 12, 1, LT_F32, cpu), LT_DIMS(3, 4)), 0.5);
    if (wrong)
        w = lt_add_scalar(w, 1e-3);
    lt_tensor *ts[10] = {
        w,
        LT_T(LT_I64, LT_DIMS(2), -1, 2),
        LT_T(LT_BF16, LT_DIMS(5), 1.0, -2.5, 0.15625, 65536.0, -0.0078125),
        LT_T(LT_F16, LT_DIMS(4), 0.5, -1.25, 65504.0, 6.103515625e-05),
        lt_div_scalar(lt_reshape(lt_arange(1, 7, 1, LT_F64, cpu), LT_DIMS(2, 3)), 3.0),
        LT_T(LT_I32, LT_DIMS(2, 1), -7, 2147483647),
        LT_T(LT_U8, LT_DIMS(3), 0, 255, 128),
        LT_T(LT_BOOL, LT_DIMS(3), 1, 0, 1),
        lt_scalar(42.0, LT_F32, cpu),
        lt_zeros(LT_DIMS(0, 3), LT_F32, cpu),
    };
    const char *names[10] = {"w", "b", "h", "f", "d", "i", "u", "m", "s", "e"};
    assert_int_equal(lt_save_safetensors(path, ts, names, 10), LT_OK);
}

static void test_torch_reads_our_file(void **state)
{
    (void)state;
    if (system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0) {
        printf("skipped: python3-torch not installed\n");
        return;
    }
    char dir[64], path[128], bad[128], script[512], cmd[1024];
    make_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/torch.safetensors", dir);
    snprintf(bad, sizeof bad, "%s/wrong.safetensors", dir);
    tests_dir(script, sizeof script);
    strncat(script, "/safetensors_torch_check.py", sizeof script - strlen(script) - 1);
    if (access(script, R_OK) != 0)
        fail_msg("cannot find %s", script);
    save_torch_sample(path, false);
    save_torch_sample(bad, true);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s'", script, path);
    int rc = system(cmd);
    assert_true(WIFEXITED(rc));
    assert_int_equal(WEXITSTATUS(rc), 0);
    /* the script does detect a wrong value */
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' >/dev/null 2>&1", script, bad);
    rc = system(cmd);
    assert_true(WIFEXITED(rc));
    assert_int_not_equal(WEXITSTATUS(rc), 0);
    rm_tmpdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_round_trip_cpu),
        LT_TEST(test_round_trip_lazy),
        LT_TEST(test_lazy_pending_and_views),
        LT_TEST(test_file_layout),
        LT_TEST(test_load_foreign_files),
        LT_TEST(test_truncated_and_bad_length),
        LT_TEST(test_corrupt_headers),
        LT_TEST(test_bad_offsets),
        LT_TEST(test_name_shape_dtype_mismatch),
        LT_TEST(test_load_bad_arguments),
        LT_TEST(test_save_atomic_and_failures),
        LT_TEST(test_save_bad_arguments),
        LT_TEST(test_torch_reads_our_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
