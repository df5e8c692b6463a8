/* shape.c - shape helpers shared by every layer, and the one rule that
 * decides which shapes may exist (lt_check_shape). */
#include "core/core.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int64_t lt_shape_numel(const int64_t *shape, int ndim)
{
    int64_t n;
    return lt_shape_numel_checked(shape, ndim, &n) ? n : INT64_MAX;
}

bool lt_shape_numel_checked(const int64_t *shape, int ndim, int64_t *numel)
{
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) { /* 0 elements, however large the other sizes */
            *numel = 0;
            return true;
        }
    }
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (__builtin_mul_overflow(n, shape[i], &n)) {
            *numel = INT64_MAX;
            return false;
        }
    }
    *numel = n;
    return true;
}

bool lt_shape_equal(const int64_t *a, int an, const int64_t *b, int bn)
{
    if (an != bn)
        return false;
    for (int i = 0; i < an; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

const char *lt_shape_str(const int64_t *shape, int ndim, char *buf, size_t cap)
{
    size_t used = 0;
    if (cap == 0)
        return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < ndim && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (used < cap)
        snprintf(buf + used, cap - used, "]");
    return buf;
}

void lt_contiguous_strides(const int64_t *shape, int ndim, int64_t *strides)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        /* saturate: such shapes are refused before any buffer exists */
        if (__builtin_mul_overflow(s, shape[i] > 1 ? shape[i] : 1, &s))
            s = INT64_MAX;
    }
}

/* The largest buffer we agree to allocate: physical memory. Anything
 * bigger would be overcommitted and killed on first touch. */
static int64_t max_buffer_bytes(void)
{
    static int64_t cached;
    if (!cached) {
        long pages = sysconf(_SC_PHYS_PAGES);
        long page = sysconf(_SC_PAGESIZE);
        cached = (pages > 0 && page > 0) ? (int64_t)pages * page : ((int64_t)1 << 40);
        if (cached > LT_MAX_SPAN_BYTES)
            cached = LT_MAX_SPAN_BYTES;
    }
    return cached;
}

/* Bytes spanned by shape with every size 0 counted as 1 (the span of its
 * strides), or -1 when that overflows int64. */
static int64_t span_bytes(const int64_t *shape, int ndim, lt_dtype dt)
{
    int64_t span = (int64_t)lt_dtype_size(dt);
    for (int i = 0; i < ndim; i++)
        if (__builtin_mul_overflow(span, shape[i] > 1 ? shape[i] : 1, &span))
            return -1;
    return span;
}

static lt_status check_sizes_nonnegative(const char *op, const int64_t *shape, int ndim)
{
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            char sb[160];
            return lt_error(LT_ERR_SHAPE, "%s: negative size %lld at dim %d of shape %s", op,
                            (long long)shape[i], i, lt_shape_str(shape, ndim, sb, sizeof sb));
        }
    }
    return LT_OK;
}

/*
 * A shape with elements must fit in memory. A shape without elements needs
 * no memory, but its strides, the byte offsets of its views (at most
 * LT_MAX_DIMS times its span) and every partial product of its sizes must
 * still fit in int64, so its span is bounded by LT_MAX_SPAN_BYTES too
 * (torch accepts any size next to a 0; we refuse what we could not index).
 */
lt_status lt_check_shape(const char *op, const int64_t *shape, int ndim, lt_dtype dt)
{
    if (ndim < 0 || ndim > LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "%s: %d dims requested, expected 0..%d", op, ndim, LT_MAX_DIMS);
    if (ndim > 0 && !shape)
        return lt_error(LT_ERR_NULL, "%s: dims is NULL but ndim is %d", op, ndim);
    if (!lt_dtype_valid((int)dt))
        return lt_error(LT_ERR_DTYPE, "%s: invalid dtype %d", op, (int)dt);
    lt_status st = check_sizes_nonnegative(op, shape, ndim);
    if (st != LT_OK)
        return st;
    char sb[160];
    int64_t numel, bytes = 0;
    if (!lt_shape_numel_checked(shape, ndim, &numel))
        return lt_error(LT_ERR_MEMORY,
                        "%s: shape %s of %s is larger than this machine's memory (%lld bytes): it has more than "
                        "2^63 - 1 elements",
                        op, lt_shape_str(shape, ndim, sb, sizeof sb), lt_dtype_name(dt),
                        (long long)max_buffer_bytes());
    if (numel > 0 && (__builtin_mul_overflow(numel, (int64_t)lt_dtype_size(dt), &bytes) ||
                      bytes > max_buffer_bytes()))
        return lt_error(LT_ERR_MEMORY, "%s: shape %s of %s is larger than this machine's memory (%lld bytes)", op,
                        lt_shape_str(shape, ndim, sb, sizeof sb), lt_dtype_name(dt),
                        (long long)max_buffer_bytes());
    /* with elements, the span is `bytes`, already bounded by max_buffer_bytes() */
    int64_t span = numel == 0 ? span_bytes(shape, ndim, dt) : bytes;
    if (span < 0 || span > LT_MAX_SPAN_BYTES)
        return lt_error(LT_ERR_SHAPE,
                        "%s: shape %s of %s has 0 elements but is too large: its nonzero sizes span more than "
                        "2^59 bytes (strides and offsets must fit in 64 bits even for an empty tensor)",
                        op, lt_shape_str(shape, ndim, sb, sizeof sb), lt_dtype_name(dt));
    return LT_OK;
}
