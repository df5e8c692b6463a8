/*
 * api_pad.c - lt_pad, torch.nn.functional.pad: constant, reflect,
 * replicate and circular padding of the last dims.
 *
 * Constant padding concatenates blocks of the value (a negative pad
 * narrows instead). The other modes gather each padded dim through an
 * index vector computed on the host from the sizes alone (position j of
 * the result reads source position p = j - before, mirrored, clamped or
 * wrapped into the dim; circular padding first crops by its negative pads,
 * as torch), so every mode is made of cat, narrow and
 * index_select: traced and lowered on the lazy device, and differentiable
 * (the gradient of a gathered position adds up where it was read).
 */
#include "api/api.h"
#include "api/compose.h"

#include <stdlib.h>

static const char *mode_name(int mode)
{
    static const char *names[] = {"constant", "reflect", "replicate", "circular"};
    return mode >= 0 && mode <= LT_PAD_CIRCULAR ? names[mode] : "unknown";
}

/* ---- constant ----------------------------------------------------------- */

/* A block of t's shape with `len` along d, filled with value. */
static lt_tensor *value_block(lt_tensor *t, int d, int64_t len, double value)
{
    int64_t shape[LT_MAX_DIMS];
    for (int k = 0; k < t->ndim; k++)
        shape[k] = k == d ? len : t->shape[k];
    return lt_full(shape, t->ndim, value, (lt_dtype)t->dtype, t->device);
}

static lt_tensor *pad_constant_dim(lt_tensor *t, int d, int64_t before, int64_t after, double value)
{
    int64_t size = t->shape[d];
    int64_t cut0 = before < 0 ? -before : 0, cut1 = after < 0 ? -after : 0;
    if (cut0 || cut1)
        t = lt_narrow(t, d, cut0, size - cut0 - cut1);
    if (!t || (before <= 0 && after <= 0))
        return t;
    lt_tensor *parts[3];
    int n = 0;
    if (before > 0)
        parts[n++] = value_block(t, d, before, value);
    parts[n++] = t;
    if (after > 0)
        parts[n++] = value_block(t, d, after, value);
    return lt_cat(parts, n, d);
}

/* ---- reflect, replicate, circular ---------------------------------------- */

/* The source position of result position j of a dim of `size` padded by
 * `before`. */
static int64_t source_position(int mode, int64_t j, int64_t before, int64_t size)
{
    int64_t p = j - before;
    if (mode == LT_PAD_REFLECT)
        return p < 0 ? -p : p >= size ? 2 * (size - 1) - p : p;
    if (mode == LT_PAD_REPLICATE)
        return p < 0 ? 0 : p >= size ? size - 1 : p;
    return ((p % size) + size) % size; /* circular */
}

static lt_tensor *pad_gather_dim(lt_tensor *t, int mode, int d, int64_t before, int64_t after)
{
    if (mode == LT_PAD_CIRCULAR && (before < 0 || after < 0)) {
        /* torch crops first and wraps around what is left */
        int64_t cut0 = before < 0 ? -before : 0, cut1 = after < 0 ? -after : 0;
        t = lt_narrow(t, d, cut0, t->shape[d] - cut0 - cut1);
        before += cut0;
        after += cut1;
        if (!t || (before == 0 && after == 0))
            return t;
    }
    int64_t size = t->shape[d], len = size + before + after;
    int64_t *idx = malloc(sizeof *idx * (size_t)(len > 0 ? len : 1));
    if (!idx)
        return lt_error(LT_ERR_MEMORY, "pad: out of memory for %lld indices", (long long)len), NULL;
    for (int64_t j = 0; j < len; j++)
        idx[j] = source_position(mode, j, before, size);
    lt_tensor *index = lt_from_data(idx, &len, 1, LT_I64, t->device);
    free(idx);
    return lt_index_select(t, d, index);
}

/* torch's rules for the modes that read t: floating dtypes (circular: any);
 * 1, 2 or 3
 * padded dims on an input with one more (no batch) or two more dims
 * (circular: two more); each pad within the dim's size. */
static lt_status check_gather_pad(const lt_tensor *t, const int64_t *pad, int npad, int mode)
{
    const char *m = mode_name(mode);
    if (mode != LT_PAD_CIRCULAR && !lt_dtype_is_floating((lt_dtype)t->dtype))
        return lt_error(LT_ERR_DTYPE, "pad: %s padding takes a floating tensor, got %s", m,
                        lt_dtype_name((lt_dtype)t->dtype));
    int np = npad / 2;
    bool rank_ok = mode == LT_PAD_CIRCULAR ? t->ndim == np + 2 : t->ndim == np + 1 || t->ndim == np + 2;
    if (np < 1 || np > 3 || !rank_ok)
        return lt_error(LT_ERR_SHAPE, "pad: %s padding of %d dims needs a %s tensor, got %d dims (1 to 3 dims "
                        "are padded)", m, np, mode == LT_PAD_CIRCULAR ? "(N, C, ...)" : "(C, ...) or (N, C, ...)",
                        t->ndim);
    for (int i = 0; i < npad; i++) {
        int d = t->ndim - 1 - i / 2;
        int64_t size = t->shape[d], p = pad[i] < 0 ? -pad[i] : pad[i];
        bool fits = mode == LT_PAD_REFLECT ? p < size : mode == LT_PAD_REPLICATE ? size > 0 : p <= size;
        if (!fits)
            return lt_error(LT_ERR_SHAPE, "pad: %s padding of %lld does not fit dim %d of size %lld (reflect: "
                            "pad < size; replicate: size > 0; circular: pad <= size)", m, (long long)pad[i], d,
                            (long long)size);
    }
    return LT_OK;
}

/* ---- lt_pad ------------------------------------------------------------- */

/* Checks the pad list and the result shape (every size >= 0). */
static lt_status check_pad(const lt_tensor *t, const int64_t *pad, int npad, int mode)
{
    if (mode < LT_PAD_CONSTANT || mode > LT_PAD_CIRCULAR)
        return lt_error(LT_ERR_ARGUMENT, "pad: mode %d is not an LT_PAD_* value", mode);
    if (npad < 0 || npad % 2 || npad / 2 > t->ndim)
        return lt_error(LT_ERR_ARGUMENT, "pad: %d pad sizes for a %d-d tensor, expected an even count of at most "
                        "%d", npad, t->ndim, 2 * t->ndim);
    if (npad > 0 && !pad)
        return lt_error(LT_ERR_NULL, "pad: pad is NULL but npad is %d", npad);
    int64_t shape[LT_MAX_DIMS];
    for (int k = 0; k < t->ndim; k++)
        shape[k] = t->shape[k];
    for (int i = 0; i < npad; i++) {
        int d = t->ndim - 1 - i / 2;
        if (pad[i] > INT64_MAX / 4 || pad[i] < -INT64_MAX / 4 || (shape[d] += pad[i]) < 0)
            return lt_error(LT_ERR_SHAPE, "pad: padding dim %d of size %lld by (%lld, %lld) leaves a negative size",
                            d, (long long)t->shape[d], (long long)pad[i & ~1], (long long)pad[i | 1]);
    }
    if (mode != LT_PAD_CONSTANT && check_gather_pad(t, pad, npad, mode) != LT_OK)
        return lt_last_status();
    return lt_check_shape("pad", shape, t->ndim, (lt_dtype)t->dtype);
}

lt_tensor *lt_pad(lt_tensor *t, const int64_t *pad, int npad, int mode, double value)
{
    if (lt_check_tensor("pad", t, 0) != LT_OK || check_pad(t, pad, npad, mode) != LT_OK)
        return NULL;
    lt_scope_begin();
    lt_tensor *r = t;
    for (int i = 0; i < npad / 2 && r; i++) {
        int d = t->ndim - 1 - i;
        int64_t before = pad[2 * i], after = pad[2 * i + 1];
        if (before == 0 && after == 0)
            continue;
        r = mode == LT_PAD_CONSTANT ? pad_constant_dim(r, d, before, after, value)
                                    : pad_gather_dim(r, mode, d, before, after);
    }
    return lt_scope_return(r == t ? lt_clone(t) : lt_contiguous(r));
}
