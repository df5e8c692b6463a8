/*
 * program_views.c - fuzz_program's view steps (narrow, select, permute,
 * transpose, view/reshape/flatten, expand, squeeze/unsqueeze, diagonal,
 * slice: each result joins its source's family) and in-place steps (into
 * any slot, views and expanded tensors included).
 */
#include "program_internal.h"

#define ND(t) lt_tensor_ndim(t)
#define SIZE(t, d) lt_tensor_shape(t)[d]

/* ---- views ------------------------------------------------------------------------------- */

static void view_done(prog_run *r, lt_tensor *t, const char *what, int dst, int src)
{
    finish(r, t, what, dst, r->family[src], true);
}

void op_narrow(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r);
    uint8_t a = prog_byte(r), b = prog_byte(r), c = prog_byte(r);
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src];
    int dim = (int)(a % (uint8_t)(ND(x) + 2)) - 1;
    int64_t size = dim >= -1 && ND(x) > 0 && dim < ND(x) ? SIZE(x, dim < 0 ? ND(x) - 1 : dim) : 1;
    int64_t start = (int64_t)(b % (uint64_t)(size + 3)) - 1, len = (int64_t)(c % (uint64_t)(size + 2));
    if (b == 0xff)
        start = decode_hostile(r);
    if (c == 0xff)
        len = decode_hostile(r);
    if ((r->skip & F_SIZE0) && len == 0)
        len = 1;
    say(r, "t%d = lt_narrow(t%d, %d, %lld, %lld)", dst, src, dim, (long long)start, (long long)len);
    view_done(r, lt_narrow(x, dim, start, len), "narrow", dst, src);
}

void op_select(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r);
    uint8_t a = prog_byte(r), b = prog_byte(r);
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src];
    int dim = (int)(a % (uint8_t)(ND(x) + 2)) - 1;
    int64_t size = ND(x) > 0 && dim < ND(x) ? SIZE(x, dim < 0 ? ND(x) - 1 : dim) : 1;
    int64_t index = b == 0xff ? decode_hostile(r) : (int64_t)(b % (uint64_t)(2 * size + 3)) - size - 1;
    say(r, "t%d = lt_select(t%d, %d, %lld)", dst, src, dim, (long long)index);
    view_done(r, lt_select(x, dim, index), "select", dst, src);
}

void op_permute(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r);
    uint8_t a = prog_byte(r), b = prog_byte(r);
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src];
    int n = ND(x), perm[LT_MAX_DIMS];
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates from the bits of a */
        int j = (a >> i) % (i + 1);
        int tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    if (n > 0 && b % 8 == 0)
        perm[b / 8 % n] = perm[(b / 8 + 1) % n]; /* a duplicate (or, for n == 1, the same dim) */
    say(r, "t%d = lt_permute(t%d, (int[]){", dst, src);
    for (int i = 0; i < n; i++)
        say(r, "%s%d", i ? "," : "", perm[i]);
    say(r, "}, %d)", n);
    view_done(r, lt_permute(x, perm, n), "permute", dst, src);
}

void op_transpose(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r);
    uint8_t a = prog_byte(r), b = prog_byte(r);
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src];
    int d0 = (int)(a % (uint8_t)(ND(x) + 2)) - 1, d1 = (int)(b % (uint8_t)(ND(x) + 2)) - 1;
    say(r, "t%d = lt_transpose(t%d, %d, %d)", dst, src, d0, d1);
    view_done(r, lt_transpose(x, d0, d1), "transpose", dst, src);
}

void op_reshape(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r), k = prog_byte(r) % 3;
    uint8_t a = prog_byte(r);
    int ndim = a % 4, infer = (a >> 2) % 5; /* which dim is -1 (none if >= ndim) */
    int64_t dims[4];
    for (int d = 0; d < ndim; d++)
        dims[d] = d == infer ? -1 : (int64_t)(prog_byte(r) % 5);
    if (ndim > 0 && (a & 0xf0) == 0xf0)
        dims[ndim - 1] = decode_hostile(r);
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src], *t;
    if (k == 2) {
        int s = (int)(a >> 4) % (ND(x) + 2) - 1, e = (int)(a >> 6) % (ND(x) + 2) - 1;
        t = lt_flatten(x, s, e);
        say(r, "t%d = lt_flatten(t%d, %d, %d)", dst, src, s, e);
    } else {
        t = k == 0 ? lt_view(x, dims, ndim) : lt_reshape(x, dims, ndim);
        say(r, "t%d = %s(t%d, (int64_t[]){", dst, k == 0 ? "lt_view" : "lt_reshape", src);
        for (int d = 0; d < ndim; d++)
            say(r, "%s%lld", d ? "," : "", (long long)dims[d]);
        say(r, "}, %d)", ndim);
    }
    view_done(r, t, "reshape", dst, src);
}

void op_expand(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r);
    uint8_t a = prog_byte(r);
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src];
    int lead = a % 3 == 2 && ND(x) < LT_MAX_DIMS ? 1 : 0, ndim = ND(x) + lead;
    int64_t dims[LT_MAX_DIMS];
    for (int d = 0; d < ndim; d++) {
        uint8_t b = prog_byte(r);
        int xd = d - lead;
        int64_t have = xd >= 0 ? SIZE(x, xd) : 1;
        dims[d] = b % 4 == 0 ? -1 : have == 1 || b % 4 == 3 ? decode_size(r) : have;
        if (b >= 0xf0)
            dims[d] = decode_hostile(r);
        if (xd < 0 && dims[d] == -1)
            dims[d] = 2;
    }
    say(r, "t%d = lt_expand(t%d, (int64_t[]){", dst, src);
    for (int d = 0; d < ndim; d++)
        say(r, "%s%lld", d ? "," : "", (long long)dims[d]);
    say(r, "}, %d)", ndim);
    view_done(r, lt_expand(x, dims, ndim), "expand", dst, src);
}

void op_squeeze(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r), k = prog_byte(r) % 3;
    uint8_t a = prog_byte(r);
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src], *t;
    int dim = (int)(a % (uint8_t)(ND(x) + 3)) - 1;
    if (k == 0)
        t = lt_squeeze(x, dim), say(r, "t%d = lt_squeeze(t%d, %d)", dst, src, dim);
    else if (k == 1)
        t = lt_squeeze_all(x), say(r, "t%d = lt_squeeze_all(t%d)", dst, src);
    else
        t = lt_unsqueeze(x, dim), say(r, "t%d = lt_unsqueeze(t%d, %d)", dst, src, dim);
    view_done(r, t, "squeeze", dst, src);
}

void op_diagonal(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r);
    uint8_t a = prog_byte(r), b = prog_byte(r);
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src];
    int64_t offset = a == 0xff ? decode_hostile(r) : (int64_t)(a % 5) - 2;
    int d1 = (int)(b % (uint8_t)(ND(x) + 2)) - 1, d2 = (int)((b >> 4) % (ND(x) + 2)) - 1;
    say(r, "t%d = lt_diagonal(t%d, %lld, %d, %d)", dst, src, (long long)offset, d1, d2);
    view_done(r, lt_diagonal(x, offset, d1, d2), "diagonal", dst, src);
}

void op_slice(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r);
    uint8_t a = prog_byte(r), b = prog_byte(r), c = prog_byte(r);
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src];
    int dim = (int)(a % (uint8_t)(ND(x) + 2)) - 1;
    int64_t start = (int64_t)(b % 11) - 5, end = (int64_t)(b / 11 % 11) - 5, step = c % 4;
    if (b >= 0xf8) {
        start = decode_hostile(r);
        end = decode_hostile(r);
    }
    if (c >= 0xfc)
        step = decode_hostile(r);
    if ((r->skip & F_SIZE0) && ND(x) > 0 && dim < ND(x)) {
        start = 0;
        end = INT64_MAX;
    }
    say(r, "t%d = lt_slice(t%d, %d, %lld, %lld, %lld)", dst, src, dim, (long long)start, (long long)end,
        (long long)step);
    view_done(r, lt_slice(x, dim, start, end, step), "slice", dst, src);
}

/* ---- in-place ------------------------------------------------------------------------------ */

/* False when the skipped families rule out writing into slot dst. */
static bool may_write(prog_run *r, int dst)
{
    if ((r->skip & F_VIEW_INPLACE) && r->is_view[dst])
        return false;
    return !((r->skip & F_EXPAND_INPLACE) && has_zero_stride(r->slot[dst]));
}

void op_inplace(prog_run *r)
{
    int dst = pick_src(r), src = pick_src(r), k = prog_byte(r) % 9;
    double alpha = decode_scalar(r);
    if (dst < 0 || !may_write(r, dst))
        return;
    static const char *const names[9] = {"lt_add_", "lt_sub_", "lt_mul_", "lt_div_", "lt_pow_",
                                         "lt_maximum_", "lt_minimum_", "lt_copy_", "lt_add_scaled_"};
    lt_tensor *d = r->slot[dst], *s = r->slot[src], *t = NULL;
    switch (k) {
    case 0: t = lt_add_(d, s); break;
    case 1: t = lt_sub_(d, s); break;
    case 2: t = lt_mul_(d, s); break;
    case 3: t = lt_div_(d, s); break;
    case 4: t = lt_pow_(d, s); break;
    case 5: t = lt_maximum_(d, s); break;
    case 6: t = lt_minimum_(d, s); break;
    case 7: {
        lt_tensor *c = cast_source(r, s, lt_tensor_dtype(d));
        t = lt_copy_(d, c);
        lt_release(c);
        break;
    }
    default: t = lt_add_scaled_(d, s, alpha); break;
    }
    if (k == 8)
        say(r, "lt_add_scaled_(t%d, t%d, %g)", dst, src, alpha);
    else
        say(r, "%s(t%d, t%d)", names[k], dst, src);
    finish_inplace(r, t, names[k], dst);
}

void op_inplace_scalar(prog_run *r)
{
    int dst = pick_src(r), k = prog_byte(r) % 10;
    double s = decode_scalar(r), hi = decode_scalar(r);
    if (dst < 0 || !may_write(r, dst))
        return;
    static const char *const names[10] = {"lt_fill_",       "lt_zero_",       "lt_add_scalar_", "lt_sub_scalar_",
                                          "lt_mul_scalar_", "lt_div_scalar_", "lt_pow_scalar_", "lt_clamp_",
                                          "lt_neg_",        "lt_relu_"};
    lt_tensor *d = r->slot[dst], *t = NULL;
    if (k == 0)
        s = castable(r, s, lt_tensor_dtype(d));
    switch (k) {
    case 0: t = lt_fill_(d, s); break;
    case 1: t = lt_zero_(d); break;
    case 2: t = lt_add_scalar_(d, s); break;
    case 3: t = lt_sub_scalar_(d, s); break;
    case 4: t = lt_mul_scalar_(d, s); break;
    case 5: t = lt_div_scalar_(d, s); break;
    case 6: t = lt_pow_scalar_(d, s); break;
    case 7: t = lt_clamp_(d, s, hi); break;
    case 8: t = lt_neg_(d); break;
    default: t = lt_relu_(d); break;
    }
    if (k == 1 || k >= 8)
        say(r, "%s(t%d)", names[k], dst);
    else if (k == 7)
        say(r, "lt_clamp_(t%d, %g, %g)", dst, s, hi);
    else
        say(r, "%s(t%d, %g)", names[k], dst, s);
    finish_inplace(r, t, names[k], dst);
}
