/* test_data.c - the IDX dataset loader (real Fashion-MNIST and synthetic
 * files), the seeded shuffle and the batcher on cpu and lazy devices. */
#include "lt_test.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FMNIST "/usr/share/datasets/fashion-mnist/"

/* ---- helpers ------------------------------------------------------------------- */

/* A fresh temp directory for one test (removed by rm_tmpdir). */
static void make_tmpdir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/lt_test_data_XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void rm_tmpdir(const char *dir, const char *const *files, int n)
{
    char path[512];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    assert_int_equal(rmdir(dir), 0);
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/*
 * Writes an IDX file: magic, ndim big-endian dims, then `len` payload
 * bytes, the whole cut to `keep` bytes when keep >= 0. gz selects gzip.
 */
static void write_idx(const char *path, bool gz, uint32_t magic, const uint32_t *dims, int ndim,
                      const uint8_t *payload, size_t len, long keep)
{
    size_t total = 4 + 4 * (size_t)ndim + len;
    unsigned char *buf = malloc(total);
    assert_non_null(buf);
    put_be32(buf, magic);
    for (int i = 0; i < ndim; i++)
        put_be32(buf + 4 + 4 * i, dims[i]);
    if (len)
        memcpy(buf + 4 + 4 * ndim, payload, len);
    if (keep >= 0 && (size_t)keep < total)
        total = (size_t)keep;
    if (gz) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, buf, (unsigned)total), (int)total);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(buf, 1, total, f), total);
        assert_int_equal(fclose(f), 0);
    }
    free(buf);
}

/* Writes a consistent 3-image 2x2 dataset: pixel k of image i is 10*i+k,
 * label i is 7-i. */
static void write_small_dataset(const char *dir, const char *img_name, const char *lab_name, bool gz)
{
    uint8_t px[12], lab[3] = {7, 6, 5};
    for (int i = 0; i < 12; i++)
        px[i] = (uint8_t)(10 * (i / 4) + i % 4);
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, img_name);
    write_idx(p, gz, 0x803, (const uint32_t[]){3, 2, 2}, 3, px, 12, -1);
    snprintf(p, sizeof p, "%s/%s", dir, lab_name);
    write_idx(p, gz, 0x801, (const uint32_t[]){3}, 1, lab, 3, -1);
}

/* Loads dir/img, dir/lab expecting failure with status and needle; checks
 * that out is zeroed. */
static void expect_load_error(const char *dir, const char *img, const char *lab, lt_status status,
                              const char *needle)
{
    char ip[512], lp[512];
    snprintf(ip, sizeof ip, "%s/%s", dir, img);
    snprintf(lp, sizeof lp, "%s/%s", dir, lab);
    lt_dataset d;
    memset(&d, 0xab, sizeof d);
    assert_int_equal(lt_dataset_load_idx(ip, lp, &d), status);
    LT_EXPECT_ERROR(status, needle);
    assert_int_equal(d.count, 0);
    assert_int_equal(d.rows, 0);
    assert_int_equal(d.cols, 0);
    assert_null(d.images);
    assert_null(d.labels);
}

static int64_t image_sum(const lt_dataset *d, int64_t i)
{
    int64_t s = 0, pixels = d->rows * d->cols;
    for (int64_t k = 0; k < pixels; k++)
        s += d->images[i * pixels + k];
    return s;
}

static void load_fmnist(const char *split, lt_dataset *d)
{
    char ip[256], lp[256];
    snprintf(ip, sizeof ip, FMNIST "%s-images-idx3-ubyte.gz", split);
    snprintf(lp, sizeof lp, FMNIST "%s-labels-idx1-ubyte.gz", split);
    if (lt_dataset_load_idx(ip, lp, d) != LT_OK)
        fail_msg("loading Fashion-MNIST %s: %s", split, lt_last_error());
}

/* ---- the real dataset -------------------------------------------------------------- */

/* Expected values were read once from the files with python3 (gzip +
 * struct) and cross-checked against this loader. */
static void test_fashion_mnist_train(void **state)
{
    (void)state;
    lt_dataset d;
    load_fmnist("train", &d);
    assert_int_equal(d.count, 60000);
    assert_int_equal(d.rows, 28);
    assert_int_equal(d.cols, 28);
    const uint8_t first[10] = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5}, last[5] = {5, 1, 3, 0, 5};
    assert_memory_equal(d.labels, first, 10);
    assert_memory_equal(d.labels + 59995, last, 5);
    assert_int_equal(image_sum(&d, 0), 76247);
    assert_int_equal(image_sum(&d, 1), 84598);
    assert_int_equal(image_sum(&d, 59999), 16684);
    const uint8_t row10[28] = {0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   0,   193,
                               228, 218, 213, 198, 180, 212, 210, 211, 213, 223, 220, 243, 202, 0};
    assert_memory_equal(d.images + 10 * 28, row10, 28);
    int64_t per_class[10] = {0}, total = 0;
    for (int64_t i = 0; i < d.count; i++) {
        assert_true(d.labels[i] < 10);
        per_class[d.labels[i]]++;
    }
    for (int c = 0; c < 10; c++)
        assert_int_equal(per_class[c], 6000);
    for (int64_t i = 0; i < d.count * 784; i++)
        total += d.images[i];
    assert_int_equal(total, 3431114169LL);
    lt_dataset_free(&d);
    assert_null(d.images);
    assert_int_equal(d.count, 0);
    lt_dataset_free(&d); /* twice is harmless */
    lt_dataset_free(NULL);
}

static void test_fashion_mnist_test(void **state)
{
    (void)state;
    lt_dataset d;
    load_fmnist("t10k", &d);
    assert_int_equal(d.count, 10000);
    assert_int_equal(d.rows, 28);
    assert_int_equal(d.cols, 28);
    const uint8_t first[10] = {9, 2, 1, 1, 6, 1, 4, 6, 5, 7}, last[5] = {9, 1, 8, 1, 5};
    assert_memory_equal(d.labels, first, 10);
    assert_memory_equal(d.labels + 9995, last, 5);
    assert_int_equal(image_sum(&d, 0), 33456);
    assert_int_equal(image_sum(&d, 1), 100994);
    assert_int_equal(image_sum(&d, 9999), 24390);
    int64_t total = 0;
    for (int64_t i = 0; i < d.count * 784; i++)
        total += d.images[i];
    assert_int_equal(total, 573469082LL);
    lt_dataset_free(&d);
}

/* ---- synthetic files ---------------------------------------------------------------- */

static void test_plain_and_gz_small_files(void **state)
{
    (void)state;
    char dir[64];
    make_tmpdir(dir, sizeof dir);
    write_small_dataset(dir, "img", "lab", false);
    write_small_dataset(dir, "img.gz", "lab.gz", true);
    const char *pairs[2][2] = {{"img", "lab"}, {"img.gz", "lab.gz"}};
    for (int k = 0; k < 2; k++) {
        char ip[512], lp[512];
        snprintf(ip, sizeof ip, "%s/%s", dir, pairs[k][0]);
        snprintf(lp, sizeof lp, "%s/%s", dir, pairs[k][1]);
        lt_dataset d;
        assert_int_equal(lt_dataset_load_idx(ip, lp, &d), LT_OK);
        assert_int_equal(d.count, 3);
        assert_int_equal(d.rows, 2);
        assert_int_equal(d.cols, 2);
        for (int i = 0; i < 12; i++)
            assert_int_equal(d.images[i], 10 * (i / 4) + i % 4);
        assert_int_equal(d.labels[0], 7);
        assert_int_equal(d.labels[2], 5);
        lt_dataset_free(&d);
    }
    /* a plain images file with gzip labels mixes fine */
    char ip[512], lp[512];
    snprintf(ip, sizeof ip, "%s/img", dir);
    snprintf(lp, sizeof lp, "%s/lab.gz", dir);
    lt_dataset d;
    assert_int_equal(lt_dataset_load_idx(ip, lp, &d), LT_OK);
    assert_int_equal(d.count, 3);
    lt_dataset_free(&d);
    rm_tmpdir(dir, (const char *const[]){"img", "lab", "img.gz", "lab.gz"}, 4);
}

static void test_bad_magic(void **state)
{
    (void)state;
    char dir[64];
    make_tmpdir(dir, sizeof dir);
    write_small_dataset(dir, "img", "lab", true);
    /* labels given as images and images as labels: both magics are wrong */
    expect_load_error(dir, "lab", "lab", LT_ERR_IO, "has magic 0x00000801, expected 0x00000803");
    expect_load_error(dir, "img", "img", LT_ERR_IO, "has magic 0x00000803, expected 0x00000801");
    char p[512];
    snprintf(p, sizeof p, "%s/bad", dir);
    write_idx(p, false, 0x08030000u, (const uint32_t[]){3, 2, 2}, 3, (const uint8_t[12]){0}, 12, -1);
    expect_load_error(dir, "bad", "lab", LT_ERR_IO, "bad' has magic 0x08030000");
    rm_tmpdir(dir, (const char *const[]){"img", "lab", "bad"}, 3);
}

static void test_truncated_files(void **state)
{
    (void)state;
    char dir[64], p[512];
    make_tmpdir(dir, sizeof dir);
    write_small_dataset(dir, "img", "lab", false);
    uint8_t px[12] = {0};
    /* 16 header bytes + 12 pixels expected; cut at 20 (plain and gzip) */
    snprintf(p, sizeof p, "%s/short", dir);
    write_idx(p, false, 0x803, (const uint32_t[]){3, 2, 2}, 3, px, 12, 20);
    expect_load_error(dir, "short", "lab", LT_ERR_IO, "short' is truncated: expected 28 bytes, got 20");
    snprintf(p, sizeof p, "%s/short.gz", dir);
    write_idx(p, true, 0x803, (const uint32_t[]){3, 2, 2}, 3, px, 12, 27);
    expect_load_error(dir, "short.gz", "lab", LT_ERR_IO, "short.gz' is truncated: expected 28 bytes, got 27");
    /* a header cut short */
    snprintf(p, sizeof p, "%s/hdr", dir);
    write_idx(p, false, 0x803, (const uint32_t[]){3, 2, 2}, 3, px, 12, 6);
    expect_load_error(dir, "hdr", "lab", LT_ERR_IO, "hdr' is truncated: expected 16 bytes, got 6");
    /* truncated labels */
    snprintf(p, sizeof p, "%s/lshort", dir);
    write_idx(p, false, 0x801, (const uint32_t[]){3}, 1, (const uint8_t[]){1, 2, 3}, 3, 10);
    expect_load_error(dir, "img", "lshort", LT_ERR_IO, "lshort' is truncated: expected 11 bytes, got 10");
    /* a gzip stream cut in the middle of its compressed data */
    snprintf(p, sizeof p, "%s/cut.gz", dir);
    {
        uint8_t big[4096];
        for (int i = 0; i < 4096; i++)
            big[i] = (uint8_t)(i * 7919 % 251);
        write_idx(p, true, 0x803, (const uint32_t[]){4, 32, 32}, 3, big, 4096, -1);
        struct stat sb;
        assert_int_equal(stat(p, &sb), 0);
        assert_int_equal(truncate(p, sb.st_size / 2), 0);
    }
    char ip[512], lp[512];
    snprintf(ip, sizeof ip, "%s/cut.gz", dir);
    snprintf(lp, sizeof lp, "%s/lab", dir);
    lt_dataset d;
    assert_int_not_equal(lt_dataset_load_idx(ip, lp, &d), LT_OK);
    assert_int_equal(lt_last_status(), LT_ERR_IO);
    assert_non_null(strstr(lt_last_error(), "cut.gz' is truncated: expected 4112 bytes, got "));
    assert_null(d.images);
    lt_clear_error();
    /* trailing bytes after the payload */
    snprintf(p, sizeof p, "%s/long", dir);
    write_idx(p, false, 0x801, (const uint32_t[]){2}, 1, (const uint8_t[]){1, 2, 3}, 3, -1);
    expect_load_error(dir, "img", "long", LT_ERR_IO, "long' is longer than expected: 10 bytes expected");
    rm_tmpdir(dir, (const char *const[]){"img", "lab", "short", "short.gz", "hdr", "lshort", "cut.gz", "long"}, 8);
}

static void test_count_mismatch_and_absurd_dims(void **state)
{
    (void)state;
    char dir[64], p[512];
    make_tmpdir(dir, sizeof dir);
    write_small_dataset(dir, "img", "lab", false);
    snprintf(p, sizeof p, "%s/lab4", dir);
    write_idx(p, false, 0x801, (const uint32_t[]){4}, 1, (const uint8_t[]){1, 2, 3, 4}, 4, -1);
    expect_load_error(dir, "img", "lab4", LT_ERR_IO, "has 3 images but");
    expect_load_error(dir, "img", "lab4", LT_ERR_IO, "lab4' has 4 labels");
    snprintf(p, sizeof p, "%s/zero_rows", dir);
    write_idx(p, false, 0x803, (const uint32_t[]){3, 0, 2}, 3, NULL, 0, -1);
    expect_load_error(dir, "zero_rows", "lab", LT_ERR_IO, "absurd dims [3, 0, 2]");
    /* 4e9 images of 65535 x 65535 pixels in a 16-byte file */
    snprintf(p, sizeof p, "%s/huge", dir);
    write_idx(p, false, 0x803, (const uint32_t[]){4000000000u, 65535, 65535}, 3, NULL, 0, -1);
    expect_load_error(dir, "huge", "lab", LT_ERR_IO, "absurd dims [4000000000, 65535, 65535]");
    /* a plausible size that the file does not hold: reported as truncated
     * without allocating the claimed 1 GB */
    snprintf(p, sizeof p, "%s/claims", dir);
    write_idx(p, false, 0x803, (const uint32_t[]){1000000, 32, 32}, 3, (const uint8_t[8]){0}, 8, -1);
    expect_load_error(dir, "claims", "lab", LT_ERR_IO, "truncated: expected 1024000016 bytes, got 24");
    /* an empty dataset is valid */
    snprintf(p, sizeof p, "%s/img0", dir);
    write_idx(p, false, 0x803, (const uint32_t[]){0, 28, 28}, 3, NULL, 0, -1);
    snprintf(p, sizeof p, "%s/lab0", dir);
    write_idx(p, false, 0x801, (const uint32_t[]){0}, 1, NULL, 0, -1);
    char ip[512], lp[512];
    snprintf(ip, sizeof ip, "%s/img0", dir);
    snprintf(lp, sizeof lp, "%s/lab0", dir);
    lt_dataset d;
    assert_int_equal(lt_dataset_load_idx(ip, lp, &d), LT_OK);
    assert_int_equal(d.count, 0);
    assert_int_equal(d.rows, 28);
    lt_tensor *x = NULL, *y = NULL;
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 4, 0.0, 1.0, lt_device_cpu(), &x, &y), 0);
    assert_null(x);
    lt_dataset_free(&d);
    rm_tmpdir(dir, (const char *const[]){"img", "lab", "lab4", "zero_rows", "huge", "claims", "img0", "lab0"}, 8);
}

static void test_missing_files(void **state)
{
    (void)state;
    lt_dataset d;
    assert_int_equal(lt_dataset_load_idx("/nonexistent/dir/imgs.gz", FMNIST "train-labels-idx1-ubyte.gz", &d),
                     LT_ERR_IO);
    assert_non_null(strstr(lt_last_error(), "cannot open images file '/nonexistent/dir/imgs.gz'"));
    assert_non_null(strstr(lt_last_error(), "No such file"));
    assert_null(strstr(lt_last_error(), "dataset-fashion-mnist")); /* no hint outside the dataset dir */
    lt_clear_error();
    /* a wrong name under the dataset directory gets the package hint */
    assert_int_equal(lt_dataset_load_idx(FMNIST "train-images-idx3-ubyte.gz", FMNIST "train-labels.gz", &d),
                     LT_ERR_IO);
    assert_non_null(strstr(lt_last_error(), "cannot open labels file '" FMNIST "train-labels.gz'"));
    LT_EXPECT_ERROR(LT_ERR_IO, "install the Debian package dataset-fashion-mnist (apt-get install "
                               "dataset-fashion-mnist)");
    assert_null(d.images);
    assert_int_equal(d.count, 0);
    /* NULL arguments */
    assert_int_equal(lt_dataset_load_idx(NULL, "x", &d), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "images path is NULL");
    assert_int_equal(lt_dataset_load_idx("x", NULL, &d), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "labels path is NULL");
    assert_int_equal(lt_dataset_load_idx("x", "y", NULL), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "out is NULL");
}

/* ---- shuffle ------------------------------------------------------------------------- */

static void test_shuffle(void **state)
{
    (void)state;
    enum { N = 1000 };
    uint8_t img[N], lab[N];
    memset(img, 0, sizeof img);
    memset(lab, 0, sizeof lab);
    lt_dataset d = {.count = N, .rows = 1, .cols = 1, .images = img, .labels = lab};
    int64_t *a = malloc(sizeof(int64_t) * N), *b = malloc(sizeof(int64_t) * N), *c = malloc(sizeof(int64_t) * N);
    assert_int_equal(lt_dataset_shuffle(&d, 42, a), LT_OK);
    assert_int_equal(lt_dataset_shuffle(&d, 42, b), LT_OK);
    assert_int_equal(lt_dataset_shuffle(&d, 43, c), LT_OK);
    assert_memory_equal(a, b, sizeof(int64_t) * N);
    bool seen[N] = {false};
    int64_t fixed = 0, differ = 0;
    for (int i = 0; i < N; i++) {
        assert_true(a[i] >= 0 && a[i] < N);
        assert_false(seen[a[i]]);
        seen[a[i]] = true;
        fixed += a[i] == i;
        differ += a[i] != c[i];
    }
    /* a random permutation has about 1 fixed point; two seeds agree on
     * about 1 position */
    assert_true(fixed < 10);
    assert_true(differ > N - 10);
    /* small sizes */
    d.count = 1;
    assert_int_equal(lt_dataset_shuffle(&d, 7, a), LT_OK);
    assert_int_equal(a[0], 0);
    d.count = 0;
    assert_int_equal(lt_dataset_shuffle(&d, 7, a), LT_OK);
    /* every permutation of 3 shows up over many seeds, roughly uniformly */
    d.count = 3;
    int counts[3][3] = {{0}};
    for (uint64_t s = 0; s < 3000; s++) {
        assert_int_equal(lt_dataset_shuffle(&d, s, a), LT_OK);
        for (int i = 0; i < 3; i++)
            counts[i][a[i]]++;
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_true(counts[i][j] > 850 && counts[i][j] < 1150);
    /* errors */
    assert_int_equal(lt_dataset_shuffle(NULL, 1, a), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "dataset is NULL");
    assert_int_equal(lt_dataset_shuffle(&d, 1, NULL), LT_ERR_NULL);
    LT_EXPECT_ERROR(LT_ERR_NULL, "perm is NULL");
    d.count = -1;
    assert_int_equal(lt_dataset_shuffle(&d, 1, a), LT_ERR_ARGUMENT);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "invalid dataset (count -1");
    free(a);
    free(b);
    free(c);
}

/* ---- batches ------------------------------------------------------------------------- */

/* 5 images of 2x3: pixel k of image i is 50*i + 7*k; label i is i+1. */
static lt_dataset small_dataset(uint8_t *img, uint8_t *lab)
{
    for (int i = 0; i < 5; i++) {
        for (int k = 0; k < 6; k++)
            img[i * 6 + k] = (uint8_t)(50 * i + 7 * k);
        lab[i] = (uint8_t)(i + 1);
    }
    return (lt_dataset){.count = 5, .rows = 2, .cols = 3, .images = img, .labels = lab};
}

/* Checks a batch against the formula (x/255 - mean)/std, in double. */
static void check_batch(lt_tensor *x, lt_tensor *y, const lt_dataset *d, const int64_t *samples, int64_t b,
                        double mean, double std)
{
    LT_ASSERT_SHAPE(x, b, 1, d->rows, d->cols);
    LT_ASSERT_SHAPE(y, b);
    assert_int_equal(lt_tensor_dtype(x), LT_F32);
    assert_int_equal(lt_tensor_dtype(y), LT_I64);
    int64_t pixels = d->rows * d->cols;
    double *expect_x = malloc(sizeof(double) * (size_t)(b * pixels));
    double *expect_y = malloc(sizeof(double) * (size_t)b);
    for (int64_t i = 0; i < b; i++) {
        for (int64_t k = 0; k < pixels; k++)
            expect_x[i * pixels + k] = (d->images[samples[i] * pixels + k] / 255.0 - mean) / std;
        expect_y[i] = d->labels[samples[i]];
    }
    LT_ASSERT_ARRAY(x, expect_x, b * pixels, 1e-6);
    LT_ASSERT_ARRAY(y, expect_y, b, 0);
    free(expect_x);
    free(expect_y);
}

static void test_batch_values_and_last_partial(void **state)
{
    (void)state;
    uint8_t img[30], lab[5];
    lt_dataset d = small_dataset(img, lab);
    lt_tensor *x, *y;
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 2, 0.5, 0.25, lt_device_cpu(), &x, &y), 2);
    check_batch(x, y, &d, (const int64_t[]){0, 1}, 2, 0.5, 0.25);
    assert_int_equal(lt_tensor_device(x).kind, LT_DEVICE_CPU);
    assert_int_equal(lt_dataset_batch(&d, NULL, 1, 2, 0.5, 0.25, lt_device_cpu(), &x, &y), 2);
    check_batch(x, y, &d, (const int64_t[]){2, 3}, 2, 0.5, 0.25);
    /* the last batch is partial */
    assert_int_equal(lt_dataset_batch(&d, NULL, 2, 2, 0.5, 0.25, lt_device_cpu(), &x, &y), 1);
    check_batch(x, y, &d, (const int64_t[]){4}, 1, 0.5, 0.25);
    /* past the end: 0 and no tensors */
    assert_int_equal(lt_dataset_batch(&d, NULL, 3, 2, 0.5, 0.25, lt_device_cpu(), &x, &y), 0);
    assert_null(x);
    assert_null(y);
    assert_int_equal(lt_dataset_batch(&d, NULL, INT64_MAX, 2, 0.5, 0.25, lt_device_cpu(), &x, &y), 0);
    /* one batch holding everything, with a permutation and a negative std */
    const int64_t perm[5] = {3, 0, 4, 1, 2};
    assert_int_equal(lt_dataset_batch(&d, perm, 0, 100, -0.1, -2.0, lt_device_cpu(), &x, &y), 5);
    check_batch(x, y, &d, perm, 5, -0.1, -2.0);
    assert_int_equal(lt_dataset_batch(&d, perm, 1, 3, 0.0, 1.0, lt_device_cpu(), &x, &y), 2);
    check_batch(x, y, &d, perm + 3, 2, 0.0, 1.0);
    /* exact values for one known pixel: image 1, pixel 2 = 64 */
    double v;
    assert_int_equal(lt_dataset_batch(&d, NULL, 1, 1, 0.5, 0.25, lt_device_cpu(), &x, &y), 1);
    assert_int_equal(lt_item(lt_reshape(lt_slice(lt_reshape(x, LT_DIMS(-1)), 0, 2, 3, 1), NULL, 0), &v), LT_OK);
    assert_float_equal(v, (64.0 / 255.0 - 0.5) / 0.25, 1e-6);
}

static void test_batch_outputs_belong_to_scope(void **state)
{
    (void)state;
    uint8_t img[30], lab[5];
    lt_dataset d = small_dataset(img, lab);
    int64_t before = lt_live_tensor_count();
    lt_scope_begin();
    lt_tensor *x, *y;
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 4, 0.0, 1.0, lt_device_cpu(), &x, &y), 4);
    assert_int_equal(lt_tensor_refcount(x), 1);
    assert_int_equal(lt_live_tensor_count(), before + 2);
    lt_scope_end();
    assert_int_equal(lt_live_tensor_count(), before);
}

static void test_batch_errors(void **state)
{
    (void)state;
    uint8_t img[30], lab[5];
    lt_dataset d = small_dataset(img, lab);
    lt_device cpu = lt_device_cpu();
    lt_tensor *x = (lt_tensor *)1, *y = (lt_tensor *)1;
    int64_t live = lt_live_tensor_count();
    assert_int_equal(lt_dataset_batch(NULL, NULL, 0, 2, 0, 1, cpu, &x, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "dataset is NULL");
    assert_null(x);
    assert_null(y);
    assert_int_equal(lt_dataset_batch(&d, NULL, -1, 2, 0, 1, cpu, &x, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "batch index -1 is negative");
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 0, 0, 1, cpu, &x, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "batch size 0, expected > 0");
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, -3, 0, 1, cpu, &x, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "batch size -3");
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 2, 0, 0.0, cpu, &x, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "std 0");
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 2, NAN, 1.0, cpu, &x, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "expected finite values");
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 2, 0, 1, cpu, NULL, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "images output pointer is NULL");
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 2, 0, 1, cpu, &x, NULL), -1);
    LT_EXPECT_ERROR(LT_ERR_NULL, "labels output pointer is NULL");
    lt_device bad = {LT_DEVICE_INVALID, 0};
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 2, 0, 1, bad, &x, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_DEVICE, "invalid device");
    const int64_t perm[5] = {0, 1, 5, 2, -1};
    assert_int_equal(lt_dataset_batch(&d, perm, 0, 2, 0, 1, cpu, &x, &y), 2); /* entries 0,1 fine */
    assert_int_equal(lt_dataset_batch(&d, perm, 1, 2, 0, 1, cpu, &x, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "perm[2] = 5 is out of range [0, 5)");
    assert_null(x);
    assert_int_equal(lt_dataset_batch(&d, perm, 2, 2, 0, 1, cpu, &x, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_INDEX, "perm[4] = -1");
    lt_dataset broken = d;
    broken.images = NULL;
    assert_int_equal(lt_dataset_batch(&broken, NULL, 0, 2, 0, 1, cpu, &x, &y), -1);
    LT_EXPECT_ERROR(LT_ERR_ARGUMENT, "data missing");
    /* nothing was created by the failing calls (2 from the good one) */
    assert_int_equal(lt_live_tensor_count(), live + 2);
}

static void test_batch_lazy_equals_cpu(void **state)
{
    (void)state;
    lt_device lazy = lt_device_parse("lazy");
    assert_int_equal(lazy.kind, LT_DEVICE_LAZY);
    lt_dataset d;
    load_fmnist("t10k", &d);
    int64_t *perm = malloc(sizeof(int64_t) * (size_t)d.count);
    assert_int_equal(lt_dataset_shuffle(&d, 2024, perm), LT_OK);
    const double mean = 0.2860, std = 0.3530;
    lt_tensor *xc, *yc, *xl, *yl;
    /* a middle batch and the last, partial one (10000 = 78 * 128 + 16) */
    const int64_t which[2] = {5, 78}, sizes[2] = {128, 16};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(lt_dataset_batch(&d, perm, which[k], 128, mean, std, lt_device_cpu(), &xc, &yc), sizes[k]);
        assert_int_equal(lt_dataset_batch(&d, perm, which[k], 128, mean, std, lazy, &xl, &yl), sizes[k]);
        assert_int_equal(lt_tensor_device(xl).kind, LT_DEVICE_LAZY);
        assert_int_equal(lt_tensor_device(yl).kind, LT_DEVICE_LAZY);
        LT_ASSERT_SHAPE(xl, sizes[k], 1, 28, 28);
        size_t nx = (size_t)sizes[k] * 784 * sizeof(float), ny = (size_t)sizes[k] * sizeof(int64_t);
        float *a = malloc(nx), *b = malloc(nx);
        int64_t *la = malloc(ny), *lb = malloc(ny);
        assert_int_equal(lt_copy_to_host(xc, a, nx), LT_OK);
        assert_int_equal(lt_copy_to_host(xl, b, nx), LT_OK);
        assert_int_equal(lt_copy_to_host(yc, la, ny), LT_OK);
        assert_int_equal(lt_copy_to_host(yl, lb, ny), LT_OK);
        assert_memory_equal(a, b, nx);
        assert_memory_equal(la, lb, ny);
        /* independent check of the first sample's label and pixel sum */
        int64_t s = perm[which[k] * 128];
        assert_int_equal(la[0], d.labels[s]);
        double sum = 0;
        for (int i = 0; i < 784; i++)
            sum += a[i];
        assert_float_equal(sum, (image_sum(&d, s) / 255.0 - 784 * mean) / std, 1e-3);
        free(a);
        free(b);
        free(la);
        free(lb);
    }
    /* an op on the lazy batch works like on the cpu one */
    double mc, ml;
    assert_int_equal(lt_item(lt_mean(xc, NULL, 0, false), &mc), LT_OK);
    assert_int_equal(lt_item(lt_mean(xl, NULL, 0, false), &ml), LT_OK);
    assert_float_equal(mc, ml, 1e-6);
    free(perm);
    lt_dataset_free(&d);
}

/* The first training batch in natural order: test image 0 (sum 33456,
 * label 9) normalized with Fashion-MNIST's usual statistics. */
static void test_batch_real_first_image(void **state)
{
    (void)state;
    lt_dataset d;
    load_fmnist("t10k", &d);
    lt_tensor *x, *y;
    assert_int_equal(lt_dataset_batch(&d, NULL, 0, 64, 0.2860, 0.3530, lt_device_cpu(), &x, &y), 64);
    int64_t label;
    assert_int_equal(lt_item_int(lt_select(y, 0, 0), &label), LT_OK);
    assert_int_equal(label, 9);
    double sum;
    assert_int_equal(lt_item(lt_sum(lt_to_dtype(lt_select(x, 0, 0), LT_F64), NULL, 0, false), &sum), LT_OK);
    assert_float_equal(sum, (33456 / 255.0 - 784 * 0.2860) / 0.3530, 1e-3);
    lt_dataset_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        LT_TEST(test_fashion_mnist_train),
        LT_TEST(test_fashion_mnist_test),
        LT_TEST(test_plain_and_gz_small_files),
        LT_TEST(test_bad_magic),
        LT_TEST(test_truncated_files),
        LT_TEST(test_count_mismatch_and_absurd_dims),
        LT_TEST(test_missing_files),
        LT_TEST(test_shuffle),
        LT_TEST(test_batch_values_and_last_partial),
        LT_TEST(test_batch_outputs_belong_to_scope),
        LT_TEST(test_batch_errors),
        LT_TEST(test_batch_lazy_equals_cpu),
        LT_TEST(test_batch_real_first_image),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
