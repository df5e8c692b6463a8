/*
 * fuzz_idx.c - the IDX dataset reader (images + labels, plain or gzip) on
 * hostile files.
 *
 * Input layout:
 *   byte 0        flags: bit 0 gzip the images file, bit 1 gzip the labels
 *                 file (the fuzzer then mutates the plain bytes inside a
 *                 valid gzip stream), bits 2-7 the batch size - 1
 *   bytes 1-2     n, the images file's length (little-endian, clamped)
 *   then          n bytes of images file, the rest is the labels file
 * Properties checked: no crash or sanitizer report; a failure has a status
 * and message and leaves the dataset zeroed; a success describes exactly
 * the bytes given (count * rows * cols pixels equal to the file's payload,
 * count labels) and the first batch holds the normalized pixels and labels
 * of those bytes; a shuffle is a permutation.
 */
#include "fuzz_common.h"

#include <zlib.h>

#define IDX_HEADER_IMAGES 16
#define IDX_HEADER_LABELS 8
#define MEAN 0.25
#define STD 0.5

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_common_init();
    return 0;
}

/* Writes bytes to an in-memory file, gzip-compressed if asked. */
static bool make_file(fuzz_file *f, const char *name, const uint8_t *data, size_t size, bool gzip)
{
    if (!gzip)
        return fuzz_file_open(f, name, data, size);
    if (!fuzz_file_open(f, name, NULL, 0))
        return false;
    int fd = dup(f->fd);
    gzFile g = fd >= 0 ? gzdopen(fd, "wb") : NULL;
    if (!g) {
        if (fd >= 0)
            close(fd);
        fuzz_file_close(f);
        return false;
    }
    bool ok = size == 0 || gzwrite(g, data, (unsigned)size) == (int)size;
    ok &= gzclose(g) == Z_OK;
    if (!ok)
        fuzz_file_close(f);
    return ok;
}

/* True when the loader will read these bytes as they are (not as gzip). */
static bool read_plain(const uint8_t *p, size_t n, bool gzipped)
{
    return gzipped || n < 2 || !(p[0] == 0x1f && p[1] == 0x8b);
}

static void check_success(const lt_dataset *d, const uint8_t *img, size_t img_len, const uint8_t *lab,
                          size_t lab_len, bool compare_img, bool compare_lab, int64_t batch)
{
    FUZZ_CHECK(d->count >= 0 && d->rows >= 1 && d->cols >= 1, "loaded dims [%lld, %lld, %lld]",
               (long long)d->count, (long long)d->rows, (long long)d->cols);
    int64_t pixels = d->count * d->rows * d->cols; /* bounded by the bytes read */
    FUZZ_CHECK(d->count == 0 || (d->images && d->labels), "%lld samples without data", (long long)d->count);
    if (compare_img) {
        FUZZ_CHECK(img_len == IDX_HEADER_IMAGES + (size_t)pixels, "images file of %zu bytes loaded as %lld pixels",
                   img_len, (long long)pixels);
        FUZZ_CHECK(pixels == 0 || memcmp(d->images, img + IDX_HEADER_IMAGES, (size_t)pixels) == 0,
                   "loaded pixels differ from the file");
    }
    if (compare_lab) {
        FUZZ_CHECK(lab_len == IDX_HEADER_LABELS + (size_t)d->count, "labels file of %zu bytes loaded as %lld labels",
                   lab_len, (long long)d->count);
        FUZZ_CHECK(d->count == 0 || memcmp(d->labels, lab + IDX_HEADER_LABELS, (size_t)d->count) == 0,
                   "loaded labels differ from the file");
    }
    int64_t *perm = malloc(sizeof(int64_t) * (size_t)(d->count ? d->count : 1));
    FUZZ_CHECK(perm && lt_dataset_shuffle(d, 7, perm) == LT_OK, "shuffle of a loaded dataset");
    unsigned char *seen = calloc((size_t)(d->count ? d->count : 1), 1);
    for (int64_t i = 0; i < d->count; i++) {
        FUZZ_CHECK(perm[i] >= 0 && perm[i] < d->count && !seen[perm[i]], "shuffle is not a permutation at %lld",
                   (long long)i);
        seen[perm[i]] = 1;
    }
    free(seen);

    lt_tensor *images = NULL, *labels = NULL;
    lt_clear_error();
    int64_t b = lt_dataset_batch(d, perm, 0, batch, MEAN, STD, lt_device_cpu(), &images, &labels);
    int64_t expect_b = d->count < batch ? d->count : batch;
    FUZZ_CHECK(b == expect_b, "first batch has %lld samples, expected %lld (%s)", (long long)b, (long long)expect_b,
               lt_last_error());
    if (b > 0) {
        const float *x = lt_tensor_data(images);
        const int64_t *y = lt_tensor_data(labels);
        int64_t per = d->rows * d->cols;
        for (int64_t i = 0; i < b; i++) {
            const uint8_t *src = d->images + perm[i] * per;
            FUZZ_CHECK(y[i] == d->labels[perm[i]], "label %lld of the batch", (long long)i);
            for (int64_t k = 0; k < per; k++)
                FUZZ_CHECK(x[i * per + k] == (float)(((double)src[k] / 255.0 - MEAN) / STD),
                           "pixel %lld of sample %lld of the batch", (long long)k, (long long)i);
        }
    }
    lt_release(images);
    lt_release(labels);
    free(perm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    int64_t live_before = lt_live_tensor_count();
    bool gz_img = data[0] & 1, gz_lab = data[0] & 2;
    int64_t batch = 1 + (data[0] >> 2);
    size_t img_len = (size_t)data[1] | (size_t)data[2] << 8;
    const uint8_t *img = data + 3;
    if (img_len > size - 3)
        img_len = size - 3;
    const uint8_t *lab = img + img_len;
    size_t lab_len = size - 3 - img_len;

    fuzz_file fi, fl;
    if (!make_file(&fi, "images", img, img_len, gz_img))
        return 0;
    if (!make_file(&fl, "labels", lab, lab_len, gz_lab)) {
        fuzz_file_close(&fi);
        return 0;
    }
    lt_dataset d;
    memset(&d, 0x5a, sizeof d);
    lt_clear_error();
    lt_status st = lt_dataset_load_idx(fi.path, fl.path, &d);
    fuzz_status_of(st == LT_OK, "dataset_load_idx");
    if (st == LT_OK)
        check_success(&d, img, img_len, lab, lab_len, read_plain(img, img_len, gz_img),
                      read_plain(lab, lab_len, gz_lab), batch);
    else
        FUZZ_CHECK(d.count == 0 && d.rows == 0 && d.cols == 0 && !d.images && !d.labels,
                   "a failed load (%s) left a non-empty dataset", lt_status_name(st));
    lt_dataset_free(&d);
    fuzz_file_close(&fi);
    fuzz_file_close(&fl);
    lt_clear_error();
    FUZZ_CHECK(lt_live_tensor_count() == live_before, "%lld tensor handles leaked",
               (long long)(lt_live_tensor_count() - live_before));
    return 0;
}
