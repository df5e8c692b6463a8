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
 * Saving writes a temp file next to the target and renames it (atomic).
 * Loading parses the header with a small strict JSON parser for exactly this
 * subset, validates the whole file and every requested tensor, reads all
 * requested data, and only then writes into the destination tensors.
 */
#include "api/api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c assumes a little-endian host (the format's byte order)"
#endif

#define ST_MAX_HEADER ((uint64_t)100 << 20) /* 100 MB, as the reference reader */
#define ST_MAX_FILE_DIMS 64                 /* dims a file entry may have */

/* ---- dtypes ------------------------------------------------------------------ */

/* Every dtype the format defines; `dt` is -1 for those lazytensor lacks
 * (such entries are validated and may be skipped, but not loaded). */
typedef struct st_dtype {
    const char *name;
    int dt;
    int size;
} st_dtype;

static const st_dtype st_dtypes[] = {
    {"F32", LT_F32, 4},   {"F64", LT_F64, 8},  {"I32", LT_I32, 4},   {"I64", LT_I64, 8},
    {"U8", LT_U8, 1},     {"BOOL", LT_BOOL, 1}, {"BF16", LT_BF16, 2}, {"F16", LT_F16, 2},
    {"I8", -1, 1},        {"I16", -1, 2},       {"U16", -1, 2},       {"U32", -1, 4},
    {"U64", -1, 8},       {"F8_E4M3", -1, 1},   {"F8_E5M2", -1, 1},
};
#define ST_NUM_DTYPES ((int)(sizeof st_dtypes / sizeof st_dtypes[0]))

static const char *st_name_of(lt_dtype dt)
{
    for (int i = 0; i < ST_NUM_DTYPES; i++)
        if (st_dtypes[i].dt == (int)dt)
            return st_dtypes[i].name;
    return NULL;
}

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
        if (!st_name_of((lt_dtype)tensors[i]->dtype))
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
    int64_t offset = 0;
    sbuf_put(b, "{", 1);
    for (int i = 0; i < n; i++) {
        const lt_tensor *t = tensors[i];
        int64_t nbytes = (int64_t)tensor_nbytes(t);
        if (i > 0)
            sbuf_put(b, ",", 1);
        sbuf_json_string(b, names[i]);
        sbuf_str(b, ":{\"dtype\":\"");
        sbuf_str(b, st_name_of((lt_dtype)t->dtype));
        sbuf_str(b, "\",\"shape\":[");
        for (int d = 0; d < t->ndim; d++) {
            if (d > 0)
                sbuf_put(b, ",", 1);
            sbuf_int(b, t->shape[d]);
        }
        sbuf_str(b, "],\"data_offsets\":[");
        sbuf_int(b, offset);
        sbuf_put(b, ",", 1);
        sbuf_int(b, offset + nbytes);
        sbuf_str(b, "]}");
        offset += nbytes;
    }
    sbuf_put(b, "}", 1);
    while (!b->failed && b->len % 8 != 0)
        sbuf_put(b, " ", 1);
    if (b->failed)
        return lt_error(LT_ERR_MEMORY, "save_safetensors: out of memory building the header");
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

lt_status lt_save_safetensors(const char *path, lt_tensor *const *tensors, const char *const *names, int n)
{
    lt_status st = check_save_args(path, tensors, names, n);
    if (st != LT_OK)
        return st;
    sbuf header = {0};
    st = build_header(tensors, names, n, &header);
    if (st != LT_OK) {
        free(header.data);
        return st;
    }
    size_t tmp_cap = strlen(path) + 32;
    char *tmp = malloc(tmp_cap);
    if (!tmp) {
        free(header.data);
        return lt_error(LT_ERR_MEMORY, "save_safetensors: out of memory");
    }
    snprintf(tmp, tmp_cap, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        st = lt_error(LT_ERR_IO, "save_safetensors: cannot create '%s' (for '%s'): %s", tmp, path,
                      strerror(errno));
    } else {
        st = write_file(f, tmp, &header, tensors, n);
        if (fclose(f) != 0 && st == LT_OK)
            st = lt_error(LT_ERR_IO, "save_safetensors: closing '%s' failed: %s", tmp, strerror(errno));
        if (st == LT_OK && rename(tmp, path) != 0)
            st = lt_error(LT_ERR_IO, "save_safetensors: cannot rename '%s' to '%s': %s", tmp, path,
                          strerror(errno));
        if (st != LT_OK)
            remove(tmp);
    }
    free(tmp);
    free(header.data);
    return st;
}

/* ---- a strict JSON parser for the header subset --------------------------------------- */

typedef struct parser {
    const char *start, *p, *end;
    const char *err; /* first failure: what was expected */
} parser;

static bool fail(parser *ps, const char *what)
{
    if (!ps->err)
        ps->err = what;
    return false;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

/* Consumes character c (after whitespace). */
static bool expect(parser *ps, char c, const char *what)
{
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != c)
        return fail(ps, what);
    ps->p++;
    return true;
}

/* Consumes c if it is next (after whitespace). */
static bool accept(parser *ps, char c)
{
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return true;
    }
    return false;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool parse_hex4(parser *ps, uint32_t *out)
{
    if (ps->end - ps->p < 4)
        return fail(ps, "4 hex digits after \\u");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value(ps->p[i]);
        if (h < 0)
            return fail(ps, "4 hex digits after \\u");
        v = v * 16 + (uint32_t)h;
    }
    ps->p += 4;
    *out = v;
    return true;
}

/* Appends code point cp as UTF-8 (at most 4 bytes) to dst. */
static size_t put_utf8(char *dst, uint32_t cp)
{
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (char)(0xc0 | (cp >> 6));
        dst[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xe0 | (cp >> 12));
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        dst[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    dst[0] = (char)(0xf0 | (cp >> 18));
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    dst[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Decodes the \u escape whose 'u' was just consumed (with a following low
 * surrogate for code points above U+FFFF). */
static bool parse_unicode_escape(parser *ps, uint32_t *cp)
{
    uint32_t hi;
    if (!parse_hex4(ps, &hi))
        return false;
    if (hi >= 0xdc00 && hi <= 0xdfff)
        return fail(ps, "no lone low surrogate in \\u escape");
    if (hi < 0xd800 || hi > 0xdbff) {
        *cp = hi;
        return true;
    }
    uint32_t lo;
    if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
        return fail(ps, "a low surrogate after a high surrogate");
    ps->p += 2;
    if (!parse_hex4(ps, &lo))
        return false;
    if (lo < 0xdc00 || lo > 0xdfff)
        return fail(ps, "a low surrogate after a high surrogate");
    *cp = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
    return true;
}

/* Parses a string literal into a malloc'd, NUL-terminated copy (*out).
 * Decoded text is never longer than its literal, so one allocation of the
 * literal's length suffices. Embedded NULs (\u0000) are refused. */
static bool parse_string(parser *ps, char **out)
{
    if (!expect(ps, '"', "a string"))
        return false;
    const char *q = ps->p;
    while (q < ps->end && *q != '"')
        q += (*q == '\\' && q + 1 < ps->end) ? 2 : 1;
    if (q >= ps->end)
        return fail(ps, "a closing quote");
    char *s = malloc((size_t)(q - ps->p) + 1);
    if (!s)
        return fail(ps, "memory for a string");
    size_t n = 0;
    while (*ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p++;
        if (c < 0x20) {
            free(s);
            return fail(ps, "no raw control characters in strings");
        }
        if (c != '\\') {
            s[n++] = (char)c;
            continue;
        }
        static const char escaped[] = "\"\\/bfnrt", decoded[] = "\"\\/\b\f\n\r\t";
        char e = *ps->p++;
        const char *simple = e ? strchr(escaped, e) : NULL;
        if (simple) {
            s[n++] = decoded[simple - escaped];
        } else if (e == 'u') {
            uint32_t cp = 0;
            bool ok = parse_unicode_escape(ps, &cp);
            if (ok && cp == 0)
                ok = fail(ps, "no \\u0000 in strings");
            if (!ok) {
                free(s);
                return false;
            }
            n += put_utf8(s + n, cp);
        } else {
            free(s);
            return fail(ps, "a valid escape sequence");
        }
    }
    ps->p++; /* closing quote */
    s[n] = '\0';
    *out = s;
    return true;
}

/* Parses a non-negative integer (no sign, fraction or exponent; no leading
 * zeros) that fits in int64_t. */
static bool parse_uint(parser *ps, int64_t *out)
{
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
        return fail(ps, "a non-negative integer");
    if (*ps->p == '0' && ps->p + 1 < ps->end && ps->p[1] >= '0' && ps->p[1] <= '9')
        return fail(ps, "an integer without leading zeros");
    int64_t v = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        int digit = *ps->p++ - '0';
        if (v > (INT64_MAX - digit) / 10)
            return fail(ps, "an integer below 2^63");
        v = v * 10 + digit;
    }
    if (ps->p < ps->end && (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E'))
        return fail(ps, "an integer (no fraction or exponent)");
    *out = v;
    return true;
}

/* Parses [int, int, ...] into vals (at most cap entries); *count gets the
 * number of entries. */
static bool parse_uint_array(parser *ps, int64_t *vals, int cap, int *count)
{
    *count = 0;
    if (!expect(ps, '[', "an array of integers"))
        return false;
    if (accept(ps, ']'))
        return true;
    do {
        if (*count >= cap)
            return fail(ps, "fewer array entries");
        if (!parse_uint(ps, &vals[*count]))
            return false;
        (*count)++;
    } while (accept(ps, ','));
    return expect(ps, ']', "',' or ']' in an array");
}

/* ---- the parsed header ------------------------------------------------------------------ */

typedef struct st_entry {
    char *name;
    int dtype;   /* index into st_dtypes */
    int ndim;
    int64_t shape[ST_MAX_FILE_DIMS];
    int64_t begin, end;
    bool has_dtype, has_shape, has_offsets;
} st_entry;

typedef struct st_header {
    st_entry *entries;
    int count, cap;
} st_header;

static void header_free(st_header *h)
{
    for (int i = 0; i < h->count; i++)
        free(h->entries[i].name);
    free(h->entries);
    memset(h, 0, sizeof *h);
}

/* Parses one field ("dtype", "shape" or "data_offsets") of a tensor entry. */
static bool parse_entry_field(parser *ps, const char *key, st_entry *e)
{
    if (strcmp(key, "dtype") == 0 && !e->has_dtype) {
        char *name = NULL;
        if (!parse_string(ps, &name))
            return false;
        e->dtype = -1;
        for (int i = 0; i < ST_NUM_DTYPES; i++)
            if (strcmp(name, st_dtypes[i].name) == 0)
                e->dtype = i;
        free(name);
        e->has_dtype = true;
        return e->dtype >= 0 || fail(ps, "a known dtype name");
    }
    if (strcmp(key, "shape") == 0 && !e->has_shape) {
        e->has_shape = true;
        return parse_uint_array(ps, e->shape, ST_MAX_FILE_DIMS, &e->ndim);
    }
    if (strcmp(key, "data_offsets") == 0 && !e->has_offsets) {
        int64_t off[2];
        int n = 0;
        if (!parse_uint_array(ps, off, 2, &n))
            return false;
        if (n != 2)
            return fail(ps, "data_offsets with 2 entries");
        e->begin = off[0];
        e->end = off[1];
        e->has_offsets = true;
        return true;
    }
    return fail(ps, "only the keys dtype, shape, data_offsets, once each, in a tensor entry");
}

/* Parses {"dtype": .., "shape": .., "data_offsets": ..} into e. */
static bool parse_entry(parser *ps, st_entry *e)
{
    if (!expect(ps, '{', "an object for a tensor entry"))
        return false;
    if (!accept(ps, '}')) {
        do {
            char *key = NULL;
            if (!parse_string(ps, &key))
                return false;
            bool ok = expect(ps, ':', "':' after a key") && parse_entry_field(ps, key, e);
            free(key);
            if (!ok)
                return false;
        } while (accept(ps, ','));
        if (!expect(ps, '}', "',' or '}' in a tensor entry"))
            return false;
    }
    if (!e->has_dtype || !e->has_shape || !e->has_offsets)
        return fail(ps, "dtype, shape and data_offsets in every tensor entry");
    return true;
}

/* Parses the "__metadata__" value: an object of string values. */
static bool parse_metadata(parser *ps)
{
    if (!expect(ps, '{', "an object for __metadata__"))
        return false;
    if (accept(ps, '}'))
        return true;
    do {
        char *key = NULL, *value = NULL;
        bool ok = parse_string(ps, &key) && expect(ps, ':', "':' after a key") && parse_string(ps, &value);
        free(key);
        free(value);
        if (!ok)
            return false;
    } while (accept(ps, ','));
    return expect(ps, '}', "',' or '}' in __metadata__");
}

static st_entry *header_add(parser *ps, st_header *h)
{
    if (h->count == h->cap) {
        int cap = h->cap ? h->cap * 2 : 16;
        st_entry *ne = realloc(h->entries, sizeof(st_entry) * (size_t)cap);
        if (!ne)
            return fail(ps, "memory for the header entries"), NULL;
        h->entries = ne;
        h->cap = cap;
    }
    st_entry *e = &h->entries[h->count++];
    memset(e, 0, sizeof *e);
    return e;
}

/* Parses the whole header text into h. */
static bool parse_header(parser *ps, st_header *h)
{
    bool seen_metadata = false;
    if (!expect(ps, '{', "'{' at the start of the header"))
        return false;
    if (!accept(ps, '}')) {
        do {
            char *key = NULL;
            if (!parse_string(ps, &key))
                return false;
            if (!expect(ps, ':', "':' after a key")) {
                free(key);
                return false;
            }
            if (strcmp(key, "__metadata__") == 0) {
                free(key);
                if (seen_metadata)
                    return fail(ps, "a single __metadata__ entry");
                seen_metadata = true;
                if (!parse_metadata(ps))
                    return false;
                continue;
            }
            st_entry *e = header_add(ps, h);
            if (!e) {
                free(key);
                return false;
            }
            e->name = key;
            if (!parse_entry(ps, e))
                return false;
        } while (accept(ps, ','));
        if (!expect(ps, '}', "',' or '}' in the header"))
            return false;
    }
    skip_ws(ps);
    return ps->p == ps->end || fail(ps, "nothing after the header object but spaces");
}

/* ---- validation of the parsed header -------------------------------------------------- */

static int compare_entry_name(const void *a, const void *b)
{
    return strcmp(((const st_entry *)a)->name, ((const st_entry *)b)->name);
}

static int compare_entry_offset(const void *a, const void *b)
{
    const st_entry *x = *(const st_entry *const *)a, *y = *(const st_entry *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static void shape_text(const int64_t *shape, int ndim, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

/* Checks that each entry's byte range matches its dtype and shape. */
static lt_status check_entry_sizes(const char *path, const st_header *h)
{
    for (int i = 0; i < h->count; i++) {
        const st_entry *e = &h->entries[i];
        int64_t bytes = st_dtypes[e->dtype].size;
        bool overflow = false;
        for (int d = 0; d < e->ndim; d++)
            if (e->shape[d] == 0)
                bytes = 0;
        for (int d = 0; d < e->ndim && bytes > 0; d++) {
            if (bytes > INT64_MAX / e->shape[d])
                overflow = true, bytes = 0;
            else
                bytes *= e->shape[d];
        }
        if (overflow || e->end < e->begin || e->end - e->begin != bytes) {
            char s[256];
            shape_text(e->shape, e->ndim, s, sizeof s);
            return lt_error(LT_ERR_IO,
                            "load_safetensors: '%s' is corrupt: tensor \"%s\" has data_offsets [%lld, %lld] but "
                            "dtype %s shape %s needs %s%lld bytes",
                            path, e->name, (long long)e->begin, (long long)e->end, st_dtypes[e->dtype].name, s,
                            overflow ? "more than " : "", (long long)(overflow ? INT64_MAX : bytes));
        }
    }
    return LT_OK;
}

/* Checks that the byte ranges tile [0, data_len) with no gap or overlap. */
static lt_status check_entry_layout(const char *path, const st_header *h, int64_t data_len)
{
    if (h->count <= 0)
        return data_len == 0 ? LT_OK
                             : lt_error(LT_ERR_IO, "load_safetensors: '%s' is corrupt: %lld data bytes follow a "
                                                   "header with no tensors",
                                        path, (long long)data_len);
    const st_entry **by_offset = malloc(sizeof(st_entry *) * (size_t)h->count);
    if (!by_offset)
        return lt_error(LT_ERR_MEMORY, "load_safetensors: out of memory");
    for (int i = 0; i < h->count; i++)
        by_offset[i] = &h->entries[i];
    qsort(by_offset, (size_t)h->count, sizeof *by_offset, compare_entry_offset);
    lt_status st = LT_OK;
    int64_t expected_begin = 0;
    for (int i = 0; i < h->count && st == LT_OK; i++) {
        const st_entry *e = by_offset[i];
        if (e->begin != expected_begin)
            st = lt_error(LT_ERR_IO,
                          "load_safetensors: '%s' is corrupt: tensor \"%s\" data_offsets [%lld, %lld] %s (expected "
                          "it to start at byte %lld)",
                          path, e->name, (long long)e->begin, (long long)e->end,
                          e->begin < expected_begin ? "overlap another tensor" : "leave a gap",
                          (long long)expected_begin);
        else if (e->end > data_len)
            st = lt_error(LT_ERR_IO,
                          "load_safetensors: '%s' is truncated: tensor \"%s\" data_offsets [%lld, %lld] are out of "
                          "range of the %lld data bytes present",
                          path, e->name, (long long)e->begin, (long long)e->end, (long long)data_len);
        expected_begin = e->end;
    }
    if (st == LT_OK && expected_begin != data_len)
        st = lt_error(LT_ERR_IO, "load_safetensors: '%s' is corrupt: %lld data bytes, but the header describes %lld",
                      path, (long long)data_len, (long long)expected_begin);
    free(by_offset);
    return st;
}

/* Checks that names are unique and sorts the entries by name. */
static lt_status check_unique_names(const char *path, st_header *h)
{
    if (h->count < 2)
        return LT_OK;
    qsort(h->entries, (size_t)h->count, sizeof(st_entry), compare_entry_name);
    for (int i = 1; i < h->count; i++)
        if (strcmp(h->entries[i - 1].name, h->entries[i].name) == 0)
            return lt_error(LT_ERR_IO, "load_safetensors: '%s' is corrupt: tensor \"%s\" appears more than once",
                            path, h->entries[i].name);
    return LT_OK;
}

/* ---- loading ------------------------------------------------------------------------------ */

typedef struct st_file {
    const char *path;
    FILE *f;
    int64_t size;        /* bytes in the file */
    int64_t data_start;  /* 8 + header length */
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

/* Opens the file and records its size. */
static lt_status open_file(st_file *sf)
{
    sf->f = fopen(sf->path, "rb");
    if (!sf->f)
        return lt_error(LT_ERR_IO, "load_safetensors: cannot open '%s': %s", sf->path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(sf->f), &sb) != 0)
        return lt_error(LT_ERR_IO, "load_safetensors: cannot stat '%s': %s", sf->path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return lt_error(LT_ERR_IO, "load_safetensors: '%s' is not a regular file", sf->path);
    sf->size = (int64_t)sb.st_size;
    return LT_OK;
}

/* Reads the length prefix and header text, parses and validates them. */
static lt_status read_header(st_file *sf, st_header *h)
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
    if (hlen < 2 || hlen > ST_MAX_HEADER)
        return lt_error(LT_ERR_IO,
                        "load_safetensors: '%s' is corrupt (not a safetensors file?): header length %llu, expected "
                        "2 to %llu bytes",
                        sf->path, (unsigned long long)hlen, (unsigned long long)ST_MAX_HEADER);
    if ((int64_t)hlen > sf->size - 8)
        return lt_error(LT_ERR_IO, "load_safetensors: '%s' is truncated (or not a safetensors file): header of %llu "
                                   "bytes but the file has "
                                   "%lld bytes",
                        sf->path, (unsigned long long)hlen, (long long)sf->size);
    char *text = malloc((size_t)hlen);
    if (!text)
        return lt_error(LT_ERR_MEMORY, "load_safetensors: out of memory for a %llu-byte header",
                        (unsigned long long)hlen);
    st = read_at(sf, 8, text, (size_t)hlen, "the header");
    if (st == LT_OK) {
        parser ps = {text, text, text + hlen, NULL};
        if (!parse_header(&ps, h))
            st = lt_error(LT_ERR_IO, "load_safetensors: '%s' is corrupt: bad JSON header at byte %lld: expected %s",
                          sf->path, (long long)(ps.p - ps.start), ps.err ? ps.err : "valid JSON");
    }
    free(text);
    sf->data_start = 8 + (int64_t)hlen;
    if (st == LT_OK)
        st = check_unique_names(sf->path, h);
    if (st == LT_OK)
        st = check_entry_sizes(sf->path, h);
    if (st == LT_OK)
        st = check_entry_layout(sf->path, h, sf->size - sf->data_start);
    return st;
}

static lt_status check_load_args(const char *path, lt_tensor *const *tensors, const char *const *names, int n)
{
    return check_list_args("load_safetensors", path, tensors, names, n);
}

/* Finds name's entry and checks it against destination t. */
static lt_status match_entry(const char *path, const st_header *h, const char *name, const lt_tensor *t,
                             const st_entry **out)
{
    st_entry key = {.name = (char *)name};
    const st_entry *e =
        h->count > 0 ? bsearch(&key, h->entries, (size_t)h->count, sizeof(st_entry), compare_entry_name) : NULL;
    if (!e)
        return lt_error(LT_ERR_IO, "load_safetensors: '%s' has no tensor named \"%s\"", path, name);
    if (st_dtypes[e->dtype].dt != t->dtype)
        return lt_error(LT_ERR_DTYPE, "load_safetensors: tensor \"%s\" is %s in '%s' but the destination is %s",
                        name, st_dtypes[e->dtype].name, path, st_name_of((lt_dtype)t->dtype));
    if (!lt_shape_equal(e->shape, e->ndim, t->shape, t->ndim)) {
        char fs[256], ts[256];
        shape_text(e->shape, e->ndim, fs, sizeof fs);
        shape_text(t->shape, t->ndim, ts, sizeof ts);
        return lt_error(LT_ERR_SHAPE, "load_safetensors: tensor \"%s\" has shape %s in '%s' but the destination "
                                      "has shape %s",
                        name, fs, path, ts);
    }
    *out = e;
    return LT_OK;
}

/* Reads entry e's bytes into a fresh CPU tensor shaped like dst (caller
 * owns it). */
static lt_tensor *read_entry(st_file *sf, const st_entry *e, const lt_tensor *dst)
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
    return t;
}

/* Copies each source into its destination (moving it to a lazy
 * destination's device first). */
/* Loading a checkpoint is not part of any computation to differentiate:
 * parameters that require grad are written with grad mode off. */
static lt_status write_destinations(lt_tensor *const *tensors, lt_tensor **src, int n)
{
    lt_no_grad_begin();
    lt_status st = LT_OK;
    for (int i = 0; i < n && st == LT_OK; i++) {
        lt_tensor *s = src[i];
        if (tensors[i]->device.kind == LT_DEVICE_LAZY) {
            s = lt_lazy_from_cpu(src[i]);
            if (!s) {
                st = lt_last_status();
                break;
            }
        }
        lt_tensor *r = lt_copy_(tensors[i], s);
        if (s != src[i])
            lt_tensor_unref(s);
        if (!r)
            st = lt_last_status();
    }
    lt_no_grad_end();
    return st;
}

lt_status lt_load_safetensors(const char *path, lt_tensor *const *tensors, const char *const *names, int n)
{
    lt_status st = check_load_args(path, tensors, names, n);
    if (st != LT_OK)
        return st;
    st_file sf = {.path = path};
    st_header h = {0};
    lt_tensor **src = NULL;
    st = open_file(&sf);
    if (st == LT_OK)
        st = read_header(&sf, &h);
    if (st == LT_OK && n > 0 && !(src = calloc((size_t)n, sizeof *src)))
        st = lt_error(LT_ERR_MEMORY, "load_safetensors: out of memory");
    for (int i = 0; i < n && st == LT_OK; i++) {
        const st_entry *e = NULL;
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
    header_free(&h);
    if (sf.f)
        fclose(sf.f);
    return st;
}
