/*
 * safetensors_header.c - the header of a safetensors file: a strict JSON
 * parser for exactly the subset the format uses, and the validation of the
 * parsed entries against the data section (dtype sizes times shapes, byte
 * ranges that tile the data without gaps or overlaps, unique names), all
 * with overflow-checked arithmetic: every byte of the file is hostile.
 */
#include "nn/safetensors_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const lt_st_dtype lt_st_dtypes[LT_ST_NUM_DTYPES] = {
    {"F32", LT_F32, 4},   {"F64", LT_F64, 8},  {"I32", LT_I32, 4},   {"I64", LT_I64, 8},
    {"U8", LT_U8, 1},     {"BOOL", LT_BOOL, 1}, {"BF16", LT_BF16, 2}, {"F16", LT_F16, 2},
    {"I8", -1, 1},        {"I16", -1, 2},       {"U16", -1, 2},       {"U32", -1, 4},
    {"U64", -1, 8},       {"F8_E4M3", -1, 1},   {"F8_E5M2", -1, 1},
};

const char *lt_st_name_of(lt_dtype dt)
{
    for (int i = 0; i < LT_ST_NUM_DTYPES; i++)
        if (lt_st_dtypes[i].dt == (int)dt)
            return lt_st_dtypes[i].name;
    return NULL;
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

void lt_st_header_free(lt_st_header *h)
{
    for (int i = 0; i < h->count; i++)
        free(h->entries[i].name);
    free(h->entries);
    memset(h, 0, sizeof *h);
}

/* Parses one field ("dtype", "shape" or "data_offsets") of a tensor entry. */
static bool parse_entry_field(parser *ps, const char *key, lt_st_entry *e)
{
    if (strcmp(key, "dtype") == 0 && !e->has_dtype) {
        char *name = NULL;
        if (!parse_string(ps, &name))
            return false;
        e->dtype = -1;
        for (int i = 0; i < LT_ST_NUM_DTYPES; i++)
            if (strcmp(name, lt_st_dtypes[i].name) == 0)
                e->dtype = i;
        free(name);
        e->has_dtype = true;
        return e->dtype >= 0 || fail(ps, "a known dtype name");
    }
    if (strcmp(key, "shape") == 0 && !e->has_shape) {
        e->has_shape = true;
        return parse_uint_array(ps, e->shape, LT_ST_MAX_FILE_DIMS, &e->ndim);
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
static bool parse_entry(parser *ps, lt_st_entry *e)
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

static lt_st_entry *header_add(parser *ps, lt_st_header *h)
{
    if (h->count == h->cap) {
        int cap = h->cap ? h->cap * 2 : 16;
        lt_st_entry *ne = realloc(h->entries, sizeof(lt_st_entry) * (size_t)cap);
        if (!ne)
            return fail(ps, "memory for the header entries"), NULL;
        h->entries = ne;
        h->cap = cap;
    }
    lt_st_entry *e = &h->entries[h->count++];
    memset(e, 0, sizeof *e);
    return e;
}

/* Parses the whole header text into h. */
static bool parse_header(parser *ps, lt_st_header *h)
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
            lt_st_entry *e = header_add(ps, h);
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
    return strcmp(((const lt_st_entry *)a)->name, ((const lt_st_entry *)b)->name);
}

static int compare_entry_offset(const void *a, const void *b)
{
    const lt_st_entry *x = *(const lt_st_entry *const *)a, *y = *(const lt_st_entry *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Bytes of an entry's data from its dtype and shape; false on overflow. */
static bool entry_bytes(const lt_st_entry *e, int64_t *bytes)
{
    int64_t numel;
    return lt_shape_numel_checked(e->shape, e->ndim, &numel) &&
           !__builtin_mul_overflow(numel, (int64_t)lt_st_dtypes[e->dtype].size, bytes);
}

/* Checks that each entry's byte range matches its dtype and shape. */
static lt_status check_entry_sizes(const char *path, const lt_st_header *h)
{
    for (int i = 0; i < h->count; i++) {
        const lt_st_entry *e = &h->entries[i];
        int64_t bytes = 0;
        bool fits = entry_bytes(e, &bytes);
        /* begin, end >= 0 (parse_uint), so end - begin cannot overflow */
        if (!fits || e->end < e->begin || e->end - e->begin != bytes) {
            char s[256];
            lt_shape_str(e->shape, e->ndim, s, sizeof s);
            return lt_error(LT_ERR_IO,
                            "load_safetensors: '%s' is corrupt: tensor \"%s\" has data_offsets [%lld, %lld] but "
                            "dtype %s shape %s needs %s%lld bytes",
                            path, e->name, (long long)e->begin, (long long)e->end, lt_st_dtypes[e->dtype].name, s,
                            fits ? "" : "more than ", (long long)(fits ? bytes : INT64_MAX));
        }
    }
    return LT_OK;
}

/* Checks that the byte ranges tile [0, data_len) with no gap or overlap. */
static lt_status check_entry_layout(const char *path, const lt_st_header *h, int64_t data_len)
{
    if (h->count <= 0)
        return data_len == 0 ? LT_OK
                             : lt_error(LT_ERR_IO, "load_safetensors: '%s' is corrupt: %lld data bytes follow a "
                                                   "header with no tensors",
                                        path, (long long)data_len);
    const lt_st_entry **by_offset = malloc(sizeof(lt_st_entry *) * (size_t)h->count);
    if (!by_offset)
        return lt_error(LT_ERR_MEMORY, "load_safetensors: out of memory");
    for (int i = 0; i < h->count; i++)
        by_offset[i] = &h->entries[i];
    qsort(by_offset, (size_t)h->count, sizeof *by_offset, compare_entry_offset);
    lt_status st = LT_OK;
    int64_t expected_begin = 0;
    for (int i = 0; i < h->count && st == LT_OK; i++) {
        const lt_st_entry *e = by_offset[i];
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
static lt_status check_unique_names(const char *path, lt_st_header *h)
{
    if (h->count < 2)
        return LT_OK;
    qsort(h->entries, (size_t)h->count, sizeof(lt_st_entry), compare_entry_name);
    for (int i = 1; i < h->count; i++)
        if (strcmp(h->entries[i - 1].name, h->entries[i].name) == 0)
            return lt_error(LT_ERR_IO, "load_safetensors: '%s' is corrupt: tensor \"%s\" appears more than once",
                            path, h->entries[i].name);
    return LT_OK;
}

lt_status lt_st_header_parse(const char *path, const char *text, size_t len, int64_t data_len, lt_st_header *h)
{
    parser ps = {text, text, text + len, NULL};
    if (!parse_header(&ps, h))
        return lt_error(LT_ERR_IO, "load_safetensors: '%s' is corrupt: bad JSON header at byte %lld: expected %s",
                        path, (long long)(ps.p - ps.start), ps.err ? ps.err : "valid JSON");
    lt_status st = check_unique_names(path, h);
    if (st == LT_OK)
        st = check_entry_sizes(path, h);
    if (st == LT_OK)
        st = check_entry_layout(path, h, data_len);
    return st;
}

const lt_st_entry *lt_st_header_find(const lt_st_header *h, const char *name)
{
    lt_st_entry key = {.name = (char *)name};
    if (h->count <= 0)
        return NULL;
    return bsearch(&key, h->entries, (size_t)h->count, sizeof(lt_st_entry), compare_entry_name);
}
