/* shape.c - shape helpers shared by every layer. */
#include "core/core.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int64_t lt_shape_numel(const int64_t *shape, int ndim)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
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
    }
    return cached;
}

lt_status lt_check_shape(const char *op, const int64_t *shape, int ndim, lt_dtype dt)
{
    if (ndim < 0 || ndim > LT_MAX_DIMS)
        return lt_error(LT_ERR_SHAPE, "%s: %d dims requested, expected 0..%d", op, ndim, LT_MAX_DIMS);
    if (ndim > 0 && !shape)
        return lt_error(LT_ERR_NULL, "%s: dims is NULL but ndim is %d", op, ndim);
    if (!lt_dtype_valid((int)dt))
        return lt_error(LT_ERR_DTYPE, "%s: invalid dtype %d", op, (int)dt);
    int64_t limit = max_buffer_bytes() / (int64_t)lt_dtype_size(dt);
    int64_t numel = 1;
    bool overflow = false, empty = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0)
            empty = true;
        if (shape[i] < 0) {
            char sb[160];
            return lt_error(LT_ERR_SHAPE, "%s: negative size %lld at dim %d of shape %s", op,
                            (long long)shape[i], i, lt_shape_str(shape, ndim, sb, sizeof sb));
        }
        if (shape[i] != 0 && numel > limit / shape[i])
            overflow = true;
        else
            numel *= shape[i];
    }
    if (overflow && !empty) {
        char sb[160];
        return lt_error(LT_ERR_MEMORY, "%s: shape %s of %s is larger than this machine's memory (%lld bytes)",
                        op, lt_shape_str(shape, ndim, sb, sizeof sb), lt_dtype_name(dt),
                        (long long)max_buffer_bytes());
    }
    return LT_OK;
}
