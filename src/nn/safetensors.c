/*
 * safetensors.c - checkpoints in the safetensors format (Hugging Face),
 * readable by PyTorch tools:
 *
 *   u64 little-endian N | N bytes of JSON header | raw tensor data
 *
 * The header maps each tensor name to {"dtype": "F32", "shape": [..],
 * "data_offsets": [begin, end]} (offsets relative to the data section), plus
 * an optional "__metadata__" object of strings. Data is little-endian,
 * contiguous and row-major; the tensors' byte ranges tile the data section
 * without gaps or overlaps.
 *
 * Saving writes a temp file next to the target (src/nn/tmpfile.c) and
 * renames it (atomic); temp files of earlier writers that died are removed
 * first. Loading parses and validates the header (safetensors_header.c),
 * checks every destination (present in the file, same dtype and shape,
 * writable), reads all requested data, and only then writes into the
 * destination tensors: on any error no tensor is touched.
 */
#include "nn/safetensors_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c assumes a little-endian host (the format's byte order)"
#endif

/* ---- a growable text buffer ---------------------------------------------------- */

typedef struct sbuf {
    char *data;
    size_t len, cap;
    bool failed;
} sbuf;

static void sbuf_put(sbuf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 1 > cap)
            cap *= 2;
        char *nd = realloc(b->data, cap);
        if (!nd) {
            b->failed = true;
            return;
        }
        b->data = nd;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void sbuf_str(sbuf *b, const char *s) { sbuf_put(b, s, strlen(s)); }

static void sbuf_int(sbuf *b, int64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v);
    sbuf_put(b, tmp, (size_t)n);
}

/* Appends s as a JSON string literal. Bytes >= 0x80 pass through (UTF-8). */
static void sbuf_json_string(sbuf *b, const char *s)
{
    sbuf_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            sbuf_put(b, esc, 2);
        } else if (*p < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            sbuf_put(b, esc, 6);
        } else {
            sbuf_put(b, (const char *)p, 1);
        }
    }
    sbuf_put(b, "\"", 1);
}

/* ---- saving ---------------------------------------------------------------------- */

static int compare_cstr_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The checks both entry points share: path, count, arrays, handles and
 * names; `op` names the entry point in messages. */
static lt_status check_list_args(const char *op, const char *path, lt_tensor *const *tensors,
                                 const char *const *names, int n)
{
    if (!path)
        return lt_error(LT_ERR_NULL, "%s: path is NULL", op);
    if (n < 0)
        return lt_error(LT_ERR_ARGUMENT, "%s: n = %d, expected >= 0", op, n);
    if (n > 0 && (!tensors || !names))
        return lt_error(LT_ERR_NULL, "%s: %s array is NULL", op, tensors ? "names" : "tensors");
    for (int i = 0; i < n; i++) {
        lt_status st = lt_check_tensor(op, tensors[i], i);
        if (st != LT_OK)
            return st;
        if (!names[i])
            return lt_error(LT_ERR_NULL, "%s: name %d is NULL", op, i);
    }
    return LT_OK;
}

/* Validates the arguments of lt_save_safetensors. */
static lt_status check_save_args(const char *path, lt_tensor *const *tensors, const char *const *names, int n)
{
    lt_status common = check_list_args("save_safetensors", path, tensors, names, n);
    if (common != LT_OK)
        return common;
    for (int i = 0; i < n; i++) {
        if (!names[i][0])
            return lt_error(LT_ERR_ARGUMENT, "save_safetensors: name %d is empty", i);
        if (strcmp(names[i], "__metadata__") == 0)
            return lt_error(LT_ERR_ARGUMENT, "save_safetensors: name %d \"__metadata__\" is reserved", i);
        if (!lt_st_name_of((lt_dtype)tensors[i]->dtype))
            return lt_error(LT_ERR_DTYPE, "save_safetensors: tensor \"%s\" has unsupported dtype %s", names[i],
                            lt_dtype_name((lt_dtype)tensors[i]->dtype));
    }
    if (n < 2)
        return LT_OK;
    const char **sorted = malloc(sizeof(char *) * (size_t)n);
    if (!sorted)
        return lt_error(LT_ERR_MEMORY, "save_safetensors: out of memory");
    memcpy(sorted, names, sizeof(char *) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(char *), compare_cstr_ptr);
    lt_status st = LT_OK;
    for (int i = 1; i < n && st == LT_OK; i++)
        if (strcmp(sorted[i - 1], sorted[i]) == 0)
            st = lt_error(LT_ERR_ARGUMENT, "save_safetensors: name \"%s\" appears more than once", sorted[i]);
    free(sorted);
    return st;
}

static size_t tensor_nbytes(const lt_tensor *t)
{
    return (size_t)lt_shape_numel(t->shape, t->ndim) * lt_dtype_size((lt_dtype)t->dtype);
}

/* Builds the JSON header, padded with spaces to a multiple of 8 bytes. */
static lt_status build_header(lt_tensor *const *tensors, const char *const *names, int n, sbuf *b)
{
    int64_t offset = 0, end = 0;
    sbuf_put(b, "{", 1);
    for (int i = 0; i < n; i++) {
        const lt_tensor *t = tensors[i];
        if (__builtin_add_overflow(offset, (int64_t)tensor_nbytes(t), &end))
            return lt_error(LT_ERR_ARGUMENT, "save_safetensors: the tensors hold more than 2^63 - 1 bytes in all");
        if (i > 0)
            sbuf_put(b, ",", 1);
        sbuf_json_string(b, names[i]);
        sbuf_str(b, ":{\"dtype\":\"");
        sbuf_str(b, lt_st_name_of((lt_dtype)t->dtype));
        sbuf_str(b, "\",\"shape\":[");
        for (int d = 0; d < t->ndim; d++) {
            if (d > 0)
                sbuf_put(b, ",", 1);
            sbuf_int(b, t->shape[d]);
        }
        sbuf_str(b, "],\"data_offsets\":[");
        sbuf_int(b, offset);
        sbuf_put(b, ",", 1);
        sbuf_int(b, end);
        sbuf_str(b, "]}");
        offset = end;
    }
    sbuf_put(b, "}", 1);
    while (!b->failed && b->len % 8 != 0)
        sbuf_put(b, " ", 1);
    if (b->failed)
        return lt_error(LT_ERR_MEMORY, "save_safetensors: out of memory building the header");
    if ((uint64_t)b->len > LT_ST_MAX_HEADER) /* no reader, ours included, would accept it */
        return lt_error(LT_ERR_ARGUMENT, "save_safetensors: the header would take %zu bytes, more than the "
                                         "format's limit of %llu (too many or too long names)",
                        b->len, (unsigned long long)LT_ST_MAX_HEADER);
    return LT_OK;
}

static lt_status write_bytes(FILE *f, const void *data, size_t n, const char *tmp)
{
    if (n > 0 && fwrite(data, 1, n, f) != n)
        return lt_error(LT_ERR_IO, "save_safetensors: writing '%s' failed: %s", tmp, strerror(errno));
    return LT_OK;
}

/* Writes tensor t's elements (row-major, its dtype). Contiguous CPU tensors
 * are written in place; others go through a host copy (syncing lazy ones). */
static lt_status write_tensor_data(FILE *f, lt_tensor *t, const char *tmp)
{
    size_t nbytes = tensor_nbytes(t);
    if (nbytes == 0)
        return LT_OK;
    if (t->device.kind == LT_DEVICE_CPU && t->storage && lt_tensor_contiguous(t))
        return write_bytes(f, lt_tensor_ptr(t), nbytes, tmp);
    void *host = lt_alloc(nbytes, "save_safetensors");
    if (!host)
        return lt_last_status();
    lt_status st = lt_copy_to_host(t, host, nbytes);
    if (st == LT_OK)
        st = write_bytes(f, host, nbytes, tmp);
    lt_free(host);
    return st;
}

/* Writes header and data to the open temp file, then flushes it to disk. */
static lt_status write_file(FILE *f, const char *tmp, const sbuf *header, lt_tensor *const *tensors, int n)
{
    unsigned char len[8];
    uint64_t hlen = (uint64_t)header->len;
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(hlen >> (8 * i));
    lt_status st = write_bytes(f, len, 8, tmp);
    if (st == LT_OK)
        st = write_bytes(f, header->data, header->len, tmp);
    for (int i = 0; i < n && st == LT_OK; i++)
        st = write_tensor_data(f, tensors[i], tmp);
    if (st == LT_OK && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        st = lt_error(LT_ERR_IO, "save_safetensors: writing '%s' failed: %s", tmp, strerror(errno));
    return st;
}

/* Writes the file to a fresh temp file next to path and renames it over
 * path; the temp file is removed on any failure. */
static lt_status write_atomically(const char *path, const sbuf *header, lt_tensor *const *tensors, int n)
{
    size_t cap = lt_tmpfile_name_cap(path);
    char *tmp = malloc(cap);
    if (!tmp)
        return lt_error(LT_ERR_MEMORY, "save_safetensors: out of memory");
    lt_status st = LT_OK;
    int fd = lt_tmpfile_create(path, tmp, cap);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        st = lt_error(LT_ERR_IO, "save_safetensors: cannot create '%s' (for '%s'): %s", tmp, path,
                      strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        return st;
    }
    st = write_file(f, tmp, header, tensors, n);
    if (fclose(f) != 0 && st == LT_OK)
        st = lt_error(LT_ERR_IO, "save_safetensors: closing '%s' failed: %s", tmp, strerror(errno));
    if (st == LT_OK && rename(tmp, path) != 0)
        st = lt_error(LT_ERR_IO, "save_safetensors: cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    if (st != LT_OK)
        unlink(tmp);
    free(tmp);
    return st;
}

lt_status lt_save_safetensors(const char *path, lt_tensor *const *tensors, const char *const *names, int n)
{
    lt_status st = check_save_args(path, tensors, names, n);
    if (st != LT_OK)
        return st;
    sbuf header = {0};
    st = build_header(tensors, names, n, &header);
    if (st == LT_OK) {
        lt_tmpfile_sweep_stale(path);
        st = write_atomically(path, &header, tensors, n);
    }
    free(header.data);
    return st;
}
/* ---- loading ------------------------------------------------------------------------------ */

typedef struct st_file {
    const char *path;
    FILE *f;
    int64_t size;       /* bytes in the file */
    int64_t data_start; /* 8 + header length */
} st_file;

static lt_status read_at(st_file *sf, int64_t offset, void *dst, size_t n, const char *what)
{
    if (n == 0)
        return LT_OK;
    if (fseeko(sf->f, (off_t)offset, SEEK_SET) != 0)
        return lt_error(LT_ERR_IO, "load_safetensors: seeking in '%s' failed: %s", sf->path, strerror(errno));
    size_t got = fread(dst, 1, n, sf->f);
    if (got != n) {
        if (ferror(sf->f))
            return lt_error(LT_ERR_IO, "load_safetensors: reading %s of '%s' failed: %s", what, sf->path,
                            strerror(errno));
        return lt_error(LT_ERR_IO, "load_safetensors: '%s' is truncated: expected %zu bytes of %s, got %zu",
                        sf->path, n, what, got);
    }
    return LT_OK;
}

/* Opens the file and records its size. O_NONBLOCK keeps a FIFO or device
 * given as path from blocking the open; anything but a regular file is
 * refused before a byte is read. */
static lt_status open_file(st_file *sf)
{
    int fd = open(sf->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return lt_error(LT_ERR_IO, "load_safetensors: cannot open '%s': %s", sf->path, strerror(errno));
    struct stat sb;
    lt_status st = LT_OK;
    if (fstat(fd, &sb) != 0)
        st = lt_error(LT_ERR_IO, "load_safetensors: cannot stat '%s': %s", sf->path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = lt_error(LT_ERR_IO, "load_safetensors: '%s' is not a regular file", sf->path);
    else if (fcntl(fd, F_SETFL, 0) != 0 || !(sf->f = fdopen(fd, "rb")))
        st = lt_error(LT_ERR_IO, "load_safetensors: cannot open '%s': %s", sf->path, strerror(errno));
    if (st != LT_OK) {
        close(fd);
        return st;
    }
    sf->size = (int64_t)sb.st_size;
    return LT_OK;
}

/* Reads the length prefix and header text, parses and validates them. */
static lt_status read_header(st_file *sf, lt_st_header *h)
{
    if (sf->size < 8)
        return lt_error(LT_ERR_IO, "load_safetensors: '%s' is truncated: %lld bytes, expected at least 8",
                        sf->path, (long long)sf->size);
    unsigned char len_bytes[8];
    lt_status st = read_at(sf, 0, len_bytes, 8, "the header length");
    if (st != LT_OK)
        return st;
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | len_bytes[i];
    if (hlen < 2 || hlen > LT_ST_MAX_HEADER)
        return lt_error(LT_ERR_IO,
                        "load_safetensors: '%s' is corrupt (not a safetensors file?): header length %llu, expected "
                        "2 to %llu bytes",
                        sf->path, (unsigned long long)hlen, (unsigned long long)LT_ST_MAX_HEADER);
    if ((int64_t)hlen > sf->size - 8)
        return lt_error(LT_ERR_IO, "load_safetensors: '%s' is truncated (or not a safetensors file): header of %llu "
                                   "bytes but the file has %lld bytes",
                        sf->path, (unsigned long long)hlen, (long long)sf->size);
    char *text = lt_sys_malloc((size_t)hlen);
    if (!text)
        return lt_error(LT_ERR_MEMORY, "load_safetensors: out of memory for a %llu-byte header",
                        (unsigned long long)hlen);
    sf->data_start = 8 + (int64_t)hlen;
    st = read_at(sf, 8, text, (size_t)hlen, "the header");
    if (st == LT_OK)
        st = lt_st_header_parse(sf->path, text, (size_t)hlen, sf->size - sf->data_start, h);
    free(text);
    return st;
}

/* True if several elements of t share one memory location (a stride-0 dim
 * of size > 1, as lt_expand makes): it cannot be a copy's destination. */
static bool self_overlapping(const lt_tensor *t)
{
    for (int d = 0; d < t->ndim; d++)
        if (t->strides[d] == 0 && t->shape[d] > 1)
            return true;
    return false;
}

/* Checks that every destination can be written, before anything is read
 * or written: lt_copy_ would refuse the same cases one by one, after the
 * earlier destinations had already been overwritten. */
static lt_status check_destinations(lt_tensor *const *tensors, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        const lt_tensor *t = tensors[i];
        if (t->device.kind != LT_DEVICE_CPU && t->device.kind != LT_DEVICE_LAZY) {
            char d[32];
            return lt_error(LT_ERR_DEVICE, "load_safetensors: destination %d (\"%s\") is on device %s, which this "
                                           "build cannot write; nothing was loaded",
                            i, names[i], lt_device_str(t->device, d, sizeof d));
        }
        if (self_overlapping(t)) {
            char s[160];
            return lt_error(LT_ERR_UNSUPPORTED,
                            "load_safetensors: destination %d (\"%s\", shape %s) is an expanded view: several of its "
                            "elements share one memory location, so it cannot be written; nothing was loaded",
                            i, names[i], lt_shape_str(t->shape, t->ndim, s, sizeof s));
        }
    }
    return LT_OK;
}

/* Finds name's entry and checks it against destination t. */
static lt_status match_entry(const char *path, const lt_st_header *h, const char *name, const lt_tensor *t,
                             const lt_st_entry **out)
{
    const lt_st_entry *e = lt_st_header_find(h, name);
    if (!e)
        return lt_error(LT_ERR_IO, "load_safetensors: '%s' has no tensor named \"%s\"", path, name);
    if (lt_st_dtypes[e->dtype].dt != t->dtype)
        return lt_error(LT_ERR_DTYPE, "load_safetensors: tensor \"%s\" is %s in '%s' but the destination is %s",
                        name, lt_st_dtypes[e->dtype].name, path, lt_st_name_of((lt_dtype)t->dtype));
    if (!lt_shape_equal(e->shape, e->ndim, t->shape, t->ndim)) {
        char fs[256], ts[256];
        lt_shape_str(e->shape, e->ndim, fs, sizeof fs);
        lt_shape_str(t->shape, t->ndim, ts, sizeof ts);
        return lt_error(LT_ERR_SHAPE, "load_safetensors: tensor \"%s\" has shape %s in '%s' but the destination "
                                      "has shape %s",
                        name, fs, path, ts);
    }
    *out = e;
    return LT_OK;
}

/* Reads entry e's bytes into a fresh tensor shaped like dst, on dst's
 * device (caller owns it). */
static lt_tensor *read_entry(st_file *sf, const lt_st_entry *e, const lt_tensor *dst)
{
    lt_meta m = lt_meta_make((lt_dtype)dst->dtype, dst->shape, dst->ndim);
    lt_tensor *t = lt_tensor_alloc(&m, lt_device_cpu(), "load_safetensors");
    if (!t)
        return NULL;
    if (read_at(sf, sf->data_start + e->begin, lt_tensor_ptr(t), (size_t)(e->end - e->begin), "tensor data") !=
        LT_OK) {
        lt_tensor_unref(t);
        return NULL;
    }
    if (dst->device.kind != LT_DEVICE_LAZY)
        return t;
    lt_tensor *lazy = lt_lazy_from_cpu(t);
    lt_tensor_unref(t);
    return lazy;
}

/* Copies each source into its destination. Every check lt_copy_ makes has
 * passed already (handles, devices, shapes, dtypes, writability) and grad
 * mode is off (loading a checkpoint is not part of any computation to
 * differentiate), so the copies do not fail. */
static lt_status write_destinations(lt_tensor *const *tensors, lt_tensor **src, int n)
{
    bool any_lazy = false;
    for (int i = 0; i < n; i++)
        any_lazy = any_lazy || tensors[i]->device.kind == LT_DEVICE_LAZY;
    if (any_lazy && lt_lazy_wait() != LT_OK) /* a failed async barrier shows here, before any write */
        return lt_last_status();
    lt_no_grad_begin();
    lt_status st = LT_OK;
    for (int i = 0; i < n && st == LT_OK; i++)
        if (!lt_copy_(tensors[i], src[i]))
            st = lt_last_status();
    lt_no_grad_end();
    return st;
}

lt_status lt_load_safetensors(const char *path, lt_tensor *const *tensors, const char *const *names, int n)
{
    lt_status st = check_list_args("load_safetensors", path, tensors, names, n);
    if (st == LT_OK)
        st = check_destinations(tensors, names, n);
    if (st != LT_OK)
        return st;
    st_file sf = {.path = path};
    lt_st_header h = {0};
    lt_tensor **src = NULL;
    st = open_file(&sf);
    if (st == LT_OK)
        st = read_header(&sf, &h);
    if (st == LT_OK && n > 0 && !(src = calloc((size_t)n, sizeof *src)))
        st = lt_error(LT_ERR_MEMORY, "load_safetensors: out of memory");
    for (int i = 0; i < n && st == LT_OK; i++) {
        const lt_st_entry *e = NULL;
        st = match_entry(path, &h, names[i], tensors[i], &e);
        if (st == LT_OK && !(src[i] = read_entry(&sf, e, tensors[i])))
            st = lt_last_status();
    }
    /* Every check passed and every byte was read: only now touch the
     * destinations. */
    if (st == LT_OK)
        st = write_destinations(tensors, src, n);
    for (int i = 0; src && i < n; i++)
        if (src[i])
            lt_tensor_unref(src[i]);
    free(src);
    lt_st_header_free(&h);
    if (sf.f)
        fclose(sf.f);
    return st;
}
