/*
 * data.c - in-memory labelled image datasets: the IDX loader (Fashion-MNIST,
 * MNIST; gzip-compressed or plain), a seeded Fisher-Yates shuffle over
 * Philox, and the batcher that turns a slice of the dataset into a
 * normalized f32 image tensor and an i64 label tensor.
 */
#include "api/api.h"
#include "core/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IDX_IMAGES_MAGIC 0x00000803u /* u8 data, 3 dims */
#define IDX_LABELS_MAGIC 0x00000801u /* u8 data, 1 dim */
/* Bounds that catch corrupt headers before anything big is allocated. */
#define IDX_MAX_IMAGE_PIXELS ((int64_t)1 << 24) /* rows * cols */
#define IDX_MAX_TOTAL_BYTES ((int64_t)1 << 36)   /* count * rows * cols */
#define IDX_READ_CHUNK ((size_t)1 << 20)

static const char FASHION_MNIST_DIR[] = "/usr/share/datasets/fashion-mnist";

/* ---- reading ------------------------------------------------------------ */

static uint32_t read_be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* gzread for any size (gzread takes an unsigned int); returns the bytes
 * read, or -1 on a read error. */
static int64_t gz_read_all(gzFile f, void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        size_t want = n - done < IDX_READ_CHUNK ? n - done : IDX_READ_CHUNK;
        int got = gzread(f, (char *)buf + done, (unsigned)want);
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        done += (size_t)got;
    }
    return (int64_t)done;
}

/* Message of a failed read: zlib's text (corrupt gzip data) or errno's. */
static const char *gz_error_text(gzFile f)
{
    int errnum = 0;
    const char *msg = gzerror(f, &errnum);
    if (errnum == Z_ERRNO)
        return strerror(errno);
    return msg && *msg ? msg : "unknown error";
}

static lt_status open_error(const char *what, const char *path, int err)
{
    bool under_dataset_dir = strncmp(path, FASHION_MNIST_DIR, sizeof FASHION_MNIST_DIR - 1) == 0;
    return lt_error(LT_ERR_IO, "dataset_load_idx: cannot open %s file '%s': %s%s", what, path, strerror(err),
                    under_dataset_dir ? "; install the Debian package dataset-fashion-mnist "
                                        "(apt-get install dataset-fashion-mnist)"
                                      : "");
}

static lt_status truncated_error(const char *path, int64_t expected, int64_t actual)
{
    return lt_error(LT_ERR_IO, "dataset_load_idx: '%s' is truncated: expected %lld bytes, got %lld", path,
                    (long long)expected, (long long)actual);
}

/* Reads the IDX header (magic, then ndim dims) of an open file into dims.
 * The magic is checked first, so a wrong kind of file is named as such. */
static lt_status read_header(gzFile f, const char *path, uint32_t magic, int ndim, int64_t *dims)
{
    unsigned char hdr[16];
    size_t hdr_bytes = 4 + 4 * (size_t)ndim;
    int64_t got = gz_read_all(f, hdr, 4);
    if (got == 4) {
        uint32_t m = read_be32(hdr);
        if (m != magic)
            return lt_error(LT_ERR_IO, "dataset_load_idx: '%s' has magic 0x%08x, expected 0x%08x (IDX u8 %s)",
                            path, m, magic, ndim == 3 ? "images [count, rows, cols]" : "labels [count]");
        int64_t more = gz_read_all(f, hdr + 4, hdr_bytes - 4);
        got = more < 0 ? -1 : 4 + more;
    }
    if (got < 0)
        return lt_error(LT_ERR_IO, "dataset_load_idx: reading '%s' failed: %s", path, gz_error_text(f));
    if (got < (int64_t)hdr_bytes)
        return truncated_error(path, (int64_t)hdr_bytes, got);
    for (int i = 0; i < ndim; i++)
        dims[i] = (int64_t)read_be32(hdr + 4 + 4 * i);
    return LT_OK;
}

/*
 * Reads exactly `payload` bytes after the header into a malloc'd buffer and
 * checks that nothing follows. The buffer grows as data arrives, so a
 * corrupt header claiming a huge size on a small file allocates little.
 */
static lt_status read_payload(gzFile f, const char *path, int64_t header_bytes, int64_t payload, uint8_t **out)
{
    size_t cap = (size_t)(payload < (int64_t)IDX_READ_CHUNK ? payload : (int64_t)IDX_READ_CHUNK);
    uint8_t *buf = lt_sys_malloc(cap ? cap : 1);
    if (!buf)
        return lt_error(LT_ERR_MEMORY, "dataset_load_idx: out of memory reading '%s'", path);
    size_t done = 0;
    for (;;) {
        if (done == cap && done < (size_t)payload) {
            size_t grown = cap * 2 < (size_t)payload ? cap * 2 : (size_t)payload;
            uint8_t *nb = lt_sys_realloc(buf, grown);
            if (!nb) {
                free(buf);
                return lt_error(LT_ERR_MEMORY, "dataset_load_idx: out of memory reading %lld bytes of '%s'",
                                (long long)payload, path);
            }
            buf = nb;
            cap = grown;
        }
        if (done == (size_t)payload)
            break;
        int64_t got = gz_read_all(f, buf + done, cap - done);
        if (got < 0) {
            free(buf);
            return lt_error(LT_ERR_IO, "dataset_load_idx: reading '%s' failed: %s", path, gz_error_text(f));
        }
        done += (size_t)got;
        if (done < cap) { /* end of file before the payload was complete */
            free(buf);
            return truncated_error(path, header_bytes + payload, header_bytes + (int64_t)done);
        }
    }
    unsigned char extra[1];
    int64_t more = gz_read_all(f, extra, 1);
    if (more != 0) {
        free(buf);
        if (more < 0)
            return lt_error(LT_ERR_IO, "dataset_load_idx: reading '%s' failed: %s", path, gz_error_text(f));
        return lt_error(LT_ERR_IO, "dataset_load_idx: '%s' is longer than expected: %lld bytes expected, "
                                   "more found",
                        path, (long long)(header_bytes + payload));
    }
    *out = buf;
    return LT_OK;
}

/* Checks image dims against the bounds above with overflow-checked
 * arithmetic (each dim is a hostile u32) and gives the payload size. */
static lt_status check_image_dims(const char *path, const int64_t *dims, int64_t *payload)
{
    int64_t count = dims[0], rows = dims[1], cols = dims[2], pixels = 0;
    bool ok = rows >= 1 && cols >= 1 && !__builtin_mul_overflow(rows, cols, &pixels) &&
              pixels <= IDX_MAX_IMAGE_PIXELS && !__builtin_mul_overflow(count, pixels, payload) &&
              *payload <= IDX_MAX_TOTAL_BYTES;
    if (!ok)
        return lt_error(LT_ERR_IO,
                        "dataset_load_idx: '%s' has absurd dims [%lld, %lld, %lld]: expected rows, cols >= 1, "
                        "rows*cols <= %lld and at most %lld bytes in all",
                        path, (long long)count, (long long)rows, (long long)cols,
                        (long long)IDX_MAX_IMAGE_PIXELS, (long long)IDX_MAX_TOTAL_BYTES);
    return LT_OK;
}

/* An uncompressed file must be exactly header + payload bytes long: check
 * it against the real size before anything is allocated. (A gzip stream's
 * size is known only by reading it; read_payload checks that one.) */
static lt_status check_plain_size(gzFile f, const struct stat *sb, const char *path, int64_t header_bytes,
                                  int64_t payload)
{
    if (!S_ISREG(sb->st_mode) || !gzdirect(f))
        return LT_OK;
    int64_t expected = header_bytes + payload, actual = (int64_t)sb->st_size; /* payload <= 2^36 */
    if (actual < expected)
        return truncated_error(path, expected, actual);
    if (actual > expected)
        return lt_error(LT_ERR_IO, "dataset_load_idx: '%s' is longer than expected: %lld bytes expected, %lld found",
                        path, (long long)expected, (long long)actual);
    return LT_OK;
}

/* Opens path (gzip or plain) with its stat, or an error naming it. */
static lt_status open_idx(const char *path, const char *what, gzFile *f, struct stat *sb)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return open_error(what, path, errno);
    if (fstat(fd, sb) != 0) {
        int err = errno;
        close(fd);
        return open_error(what, path, err);
    }
    errno = 0;
    *f = gzdopen(fd, "rb");
    if (!*f) {
        int err = errno ? errno : ENOMEM;
        close(fd);
        return open_error(what, path, err);
    }
    return LT_OK;
}

/* Opens path and reads a whole IDX u8 file of ndim dims (3: images, 1:
 * labels) into *data, with its dims. */
static lt_status load_idx_file(const char *path, const char *what, uint32_t magic, int ndim, int64_t *dims,
                               uint8_t **data)
{
    gzFile f;
    struct stat sb;
    lt_status st = open_idx(path, what, &f, &sb);
    if (st != LT_OK)
        return st;
    int64_t header_bytes = 4 + 4 * (int64_t)ndim, payload = 0;
    st = read_header(f, path, magic, ndim, dims);
    if (st == LT_OK && ndim == 3)
        st = check_image_dims(path, dims, &payload);
    else if (st == LT_OK)
        payload = dims[0]; /* a u32: at most 4 GiB of labels */
    if (st == LT_OK)
        st = check_plain_size(f, &sb, path, header_bytes, payload);
    if (st == LT_OK)
        st = read_payload(f, path, header_bytes, payload, data);
    gzclose(f);
    return st;
}

lt_status lt_dataset_load_idx(const char *images_path, const char *labels_path, lt_dataset *out)
{
    if (!out)
        return lt_error(LT_ERR_NULL, "dataset_load_idx: out is NULL");
    memset(out, 0, sizeof *out);
    if (!images_path || !labels_path)
        return lt_error(LT_ERR_NULL, "dataset_load_idx: %s path is NULL", images_path ? "labels" : "images");
    int64_t idims[3], ldims[1];
    uint8_t *images = NULL, *labels = NULL;
    lt_status st = load_idx_file(images_path, "images", IDX_IMAGES_MAGIC, 3, idims, &images);
    if (st != LT_OK)
        return st;
    st = load_idx_file(labels_path, "labels", IDX_LABELS_MAGIC, 1, ldims, &labels);
    if (st != LT_OK) {
        free(images);
        return st;
    }
    if (ldims[0] != idims[0]) {
        free(images);
        free(labels);
        return lt_error(LT_ERR_IO, "dataset_load_idx: '%s' has %lld images but '%s' has %lld labels",
                        images_path, (long long)idims[0], labels_path, (long long)ldims[0]);
    }
    out->count = idims[0];
    out->rows = idims[1];
    out->cols = idims[2];
    out->images = images;
    out->labels = labels;
    return LT_OK;
}

void lt_dataset_free(lt_dataset *d)
{
    if (!d)
        return;
    free(d->images);
    free(d->labels);
    memset(d, 0, sizeof *d);
}

/* ---- shuffling ------------------------------------------------------------ */

static lt_status check_dataset(const char *op, const lt_dataset *d)
{
    if (!d)
        return lt_error(LT_ERR_NULL, "%s: dataset is NULL", op);
    if (d->count < 0 || d->rows < 1 || d->cols < 1 || (d->count > 0 && (!d->images || !d->labels)))
        return lt_error(LT_ERR_ARGUMENT, "%s: invalid dataset (count %lld, rows %lld, cols %lld, %s)", op,
                        (long long)d->count, (long long)d->rows, (long long)d->cols,
                        d->images && d->labels ? "data present" : "data missing");
    int64_t pixels, total;
    if (__builtin_mul_overflow(d->rows, d->cols, &pixels) || __builtin_mul_overflow(d->count, pixels, &total))
        return lt_error(LT_ERR_ARGUMENT, "%s: invalid dataset: count %lld x rows %lld x cols %lld overflows 64 bits",
                        op, (long long)d->count, (long long)d->rows, (long long)d->cols);
    return LT_OK;
}

/* A uniform integer in [0, n) from block `counter` of the Philox stream
 * keyed by seed. The 64-bit value modulo n is biased by at most n / 2^64,
 * far below anything observable for dataset sizes. */
static uint64_t philox_below(uint64_t seed, uint64_t counter, uint64_t n)
{
    uint32_t ctr[4] = {(uint32_t)counter, (uint32_t)(counter >> 32), 0, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t r[4];
    lt_philox4x32_10(ctr, key, r);
    uint64_t x = ((uint64_t)r[1] << 32) | r[0];
    return x % n;
}

lt_status lt_dataset_shuffle(const lt_dataset *d, uint64_t seed, int64_t *perm)
{
    lt_status st = check_dataset("dataset_shuffle", d);
    if (st != LT_OK)
        return st;
    if (!perm)
        return lt_error(LT_ERR_NULL, "dataset_shuffle: perm is NULL");
    for (int64_t i = 0; i < d->count; i++)
        perm[i] = i;
    /* Fisher-Yates: position i swaps with a uniform j in [0, i]; block i of
     * the stream decides it, so the result depends only on the seed. */
    for (int64_t i = d->count - 1; i > 0; i--) {
        int64_t j = (int64_t)philox_below(seed, (uint64_t)i, (uint64_t)i + 1);
        int64_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    return LT_OK;
}

/* ---- batching --------------------------------------------------------------- */

static lt_status check_batch_args(const lt_dataset *d, int64_t index, int64_t batch, double mean, double std,
                                  lt_device dev, lt_tensor **images, lt_tensor **labels)
{
    lt_status st = check_dataset("dataset_batch", d);
    if (st != LT_OK)
        return st;
    if (!images || !labels)
        return lt_error(LT_ERR_NULL, "dataset_batch: %s output pointer is NULL", images ? "labels" : "images");
    if (index < 0)
        return lt_error(LT_ERR_ARGUMENT, "dataset_batch: batch index %lld is negative", (long long)index);
    if (batch <= 0)
        return lt_error(LT_ERR_ARGUMENT, "dataset_batch: batch size %lld, expected > 0", (long long)batch);
    if (std == 0.0 || !isfinite(std) || !isfinite(mean))
        return lt_error(LT_ERR_ARGUMENT, "dataset_batch: normalization mean %g, std %g: expected finite values "
                                         "and std != 0",
                        mean, std);
    if (dev.kind != LT_DEVICE_CPU && dev.kind != LT_DEVICE_LAZY) {
        char buf[32];
        return lt_error(LT_ERR_DEVICE, "dataset_batch: invalid device %s", lt_device_str(dev, buf, sizeof buf));
    }
    return LT_OK;
}

/* Checks the perm entries of the batch [start, start + b). */
static lt_status check_perm(const lt_dataset *d, const int64_t *perm, int64_t start, int64_t b)
{
    if (!perm)
        return LT_OK;
    for (int64_t i = start; i < start + b; i++)
        if (perm[i] < 0 || perm[i] >= d->count)
            return lt_error(LT_ERR_INDEX, "dataset_batch: perm[%lld] = %lld is out of range [0, %lld)",
                            (long long)i, (long long)perm[i], (long long)d->count);
    return LT_OK;
}

typedef struct fill_ctx {
    const lt_dataset *d;
    const int64_t *perm;
    int64_t start, pixels;
    const float *table;
    float *img;
    int64_t *lab;
} fill_ctx;

/* Samples [lo, hi) of the batch (a chunk of lt_parallel_for). */
static void fill_samples(void *ctx, int64_t lo, int64_t hi, int64_t chunk)
{
    const fill_ctx *f = ctx;
    (void)chunk;
    for (int64_t i = lo; i < hi; i++) {
        int64_t s = f->perm ? f->perm[f->start + i] : f->start + i;
        const uint8_t *src = f->d->images + s * f->pixels;
        float *dst = f->img + i * f->pixels;
        for (int64_t k = 0; k < f->pixels; k++)
            dst[k] = f->table[src[k]];
        f->lab[i] = (int64_t)f->d->labels[s];
    }
}

/* Fills the images [b, 1, rows, cols] and labels [b] of samples
 * start..start+b through a 256-entry table of normalized pixel values. */
static void fill_batch(const lt_dataset *d, const int64_t *perm, int64_t start, int64_t b, double mean,
                       double std, float *img, int64_t *lab)
{
    float table[256];
    for (int v = 0; v < 256; v++)
        table[v] = (float)(((double)v / 255.0 - mean) / std);
    const int64_t pixels = d->rows * d->cols;
    fill_ctx f = {d, perm, start, pixels, table, img, lab};
    int64_t grain = pixels > 0 ? 4 * LT_PARALLEL_GRAIN / pixels + 1 : b;
    lt_parallel_for(b, grain, 1, fill_samples, &f);
}

/* A fresh contiguous CPU tensor (unpublished, refcount 1). */
static lt_tensor *cpu_tensor(lt_dtype dt, const int64_t *dims, int ndim)
{
    lt_meta m = lt_meta_make(dt, dims, ndim);
    return lt_tensor_alloc(&m, lt_device_cpu(), "dataset_batch");
}

/* Moves an unpublished CPU tensor to dev (taking over its reference). */
static lt_tensor *move_to(lt_tensor *t, lt_device dev)
{
    if (dev.kind != LT_DEVICE_LAZY)
        return t;
    lt_tensor *lazy = lt_lazy_from_cpu(t);
    lt_tensor_unref(t);
    return lazy;
}

int64_t lt_dataset_batch(const lt_dataset *d, const int64_t *perm, int64_t index, int64_t batch, double mean,
                         double std, lt_device dev, lt_tensor **images, lt_tensor **labels)
{
    if (images)
        *images = NULL;
    if (labels)
        *labels = NULL;
    if (check_batch_args(d, index, batch, mean, std, dev, images, labels) != LT_OK)
        return -1;
    if (d->count == 0 || index > (d->count - 1) / batch)
        return 0;
    int64_t start = index * batch;
    int64_t b = d->count - start < batch ? d->count - start : batch;
    if (check_perm(d, perm, start, b) != LT_OK)
        return -1;

    int64_t idims[4] = {b, 1, d->rows, d->cols};
    int64_t ldims[1] = {b};
    if (lt_check_shape("dataset_batch", idims, 4, LT_F32) != LT_OK)
        return -1;
    lt_tensor *img = cpu_tensor(LT_F32, idims, 4);
    lt_tensor *lab = img ? cpu_tensor(LT_I64, ldims, 1) : NULL;
    if (!lab) {
        if (img)
            lt_tensor_unref(img);
        return -1;
    }
    fill_batch(d, perm, start, b, mean, std, (float *)lt_tensor_ptr(img), (int64_t *)lt_tensor_ptr(lab));
    img = move_to(img, dev);
    lab = move_to(lab, dev);
    if (!img || !lab) {
        if (img)
            lt_tensor_unref(img);
        if (lab)
            lt_tensor_unref(lab);
        return -1;
    }
    img->made_by = lab->made_by = "dataset_batch";
    *images = lt_tensor_publish(img);
    *labels = lt_tensor_publish(lab);
    return b;
}
