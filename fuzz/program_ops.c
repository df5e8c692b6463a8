/*
 * program_ops.c - fuzz_program's steps (views and in-place steps are in
 * program_views.c) and the step dispatcher: each step decodes its
 * arguments, runs the library calls on the run's device and records the
 * outcome (finish / finish_inplace). Operands come from slots; arguments
 * are decoded relative to the operands' shapes (see program.h).
 */
#include "program_internal.h"

#include <math.h>

#define ND(t) lt_tensor_ndim(t)
#define SIZE(t, d) lt_tensor_shape(t)[d]

/* ---- tensors from bytes ------------------------------------------------------------- */

/* A tensor of dt/dims whose elements are the next bytes (index values in
 * [-1, index_range] if index_values), made on the run's device. */
static lt_tensor *tensor_from_bytes(prog_run *r, lt_dtype dt, const int64_t *dims, int ndim, bool index_values,
                                    int64_t index_range)
{
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++)
        numel *= dims[d];
    unsigned char buf[MAX_NEW_NUMEL * 8];
    size_t esize = lt_dtype_size(dt);
    say(r, "lt_from_data((unsigned char[]){");
    for (int64_t i = 0; i < numel; i++) {
        double v = index_values ? (double)decode_index(r, index_range) : decode_element(r, dt);
        store_element(buf + (size_t)i * esize, dt, v);
        for (size_t k = 0; k < esize; k++)
            say(r, "%s%u", i || k ? "," : "", buf[(size_t)i * esize + k]);
    }
    say(r, "}, (int64_t[]){");
    for (int d = 0; d < ndim; d++)
        say(r, "%s%lld", d ? "," : "", (long long)dims[d]);
    say(r, "}, %d, %s, dev)", ndim, dtype_c(dt));
    return lt_from_data(buf, dims, ndim, dt, r->dev);
}

static void op_new(prog_run *r)
{
    int dst = pick_dst(r);
    lt_dtype dt = decode_dtype(r);
    int64_t dims[4];
    int ndim = decode_shape(r, dims);
    say(r, "t%d = ", dst);
    finish(r, tensor_from_bytes(r, dt, dims, ndim, false, 0), "from_data", dst, -1, false);
}

static void op_factory(prog_run *r)
{
    int dst = pick_dst(r);
    lt_dtype dt = decode_dtype(r);
    int64_t dims[4];
    int kind = prog_byte(r) % 7, ndim = decode_shape(r, dims);
    double a = decode_scalar(r), b = decode_scalar(r);
    uint8_t c = prog_byte(r);
    lt_tensor *t = NULL;
    bool hostile = (c & 0xc0) == 0xc0; /* one size no tensor can have */
    int64_t huge = hostile ? decode_hostile(r) : 0;
    if (hostile && kind <= 2) {
        if (ndim == 0)
            dims[ndim++] = 1;
        dims[c % ndim] = huge;
    }
    say(r, "t%d = ", dst);
    switch (kind) {
    case 0: t = lt_zeros(dims, ndim, dt, r->dev), say(r, "lt_zeros(dims, %d, %s, dev)", ndim, dtype_c(dt)); break;
    case 1: t = lt_ones(dims, ndim, dt, r->dev), say(r, "lt_ones(dims, %d, %s, dev)", ndim, dtype_c(dt)); break;
    case 2:
        a = castable(r, a, dt);
        t = lt_full(dims, ndim, a, dt, r->dev);
        say(r, "lt_full(dims, %d, %g, %s, dev)", ndim, a, dtype_c(dt));
        break;
    case 3: {
        static const double steps[6] = {1, -1, 0.5, 2, 0, 3};
        double start = (double)(c % 9) - 4, end = start + (double)(c / 9 % 9) - 2, step = steps[c / 81 % 6];
        if (castable(r, -1, dt) == 0) /* F_CAST and u8: no negative values */
            start = fabs(start), end = fabs(end);
        if (hostile)
            end = (double)huge;
        t = lt_arange(start, end, step, dt, r->dev);
        say(r, "lt_arange(%g, %g, %g, %s, dev)", start, end, step, dtype_c(dt));
        break;
    }
    case 4: {
        int64_t n = hostile ? huge : c % 5, m = c / 5 % 5;
        t = lt_eye(n, m, dt, r->dev);
        say(r, "lt_eye(%lld, %lld, %s, dev)", (long long)n, (long long)m, dtype_c(dt));
        break;
    }
    case 5: {
        int64_t steps = hostile ? huge : c % 7;
        t = lt_linspace(castable(r, a, dt), castable(r, b, dt), steps, dt, r->dev);
        say(r, "lt_linspace(%g, %g, %lld, %s, dev)", castable(r, a, dt), castable(r, b, dt), (long long)steps,
            dtype_c(dt));
        break;
    }
    default:
        a = castable(r, a, dt);
        t = lt_scalar(a, dt, r->dev);
        say(r, "lt_scalar(%g, %s, dev)", a, dtype_c(dt));
        break;
    }
    if (kind <= 2 && r->trace) {
        say(r, "; /* dims {");
        for (int d = 0; d < ndim; d++)
            say(r, "%s%lld", d ? "," : "", (long long)dims[d]);
        say(r, "} */");
    }
    finish(r, t, "factory", dst, -1, false);
}

/* ---- elementwise ---------------------------------------------------------------------- */

typedef lt_tensor *(*unary_fn)(lt_tensor *);
static const struct { const char *name; unary_fn fn; } unary_ops[] = {
    {"lt_neg", lt_neg},         {"lt_abs", lt_abs},         {"lt_exp", lt_exp},       {"lt_log", lt_log},
    {"lt_log1p", lt_log1p},     {"lt_expm1", lt_expm1},     {"lt_sqrt", lt_sqrt},     {"lt_rsqrt", lt_rsqrt},
    {"lt_sin", lt_sin},         {"lt_cos", lt_cos},         {"lt_tanh", lt_tanh},     {"lt_sigmoid", lt_sigmoid},
    {"lt_relu", lt_relu},       {"lt_gelu", lt_gelu},       {"lt_silu", lt_silu},     {"lt_erf", lt_erf},
    {"lt_sign", lt_sign},       {"lt_floor", lt_floor},     {"lt_ceil", lt_ceil},     {"lt_round", lt_round},
    {"lt_reciprocal", lt_reciprocal}, {"lt_logical_not", lt_logical_not},
};

static void op_unary(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r), k = prog_byte(r) % (int)(sizeof unary_ops / sizeof unary_ops[0]);
    if (src < 0)
        return;
    say(r, "t%d = %s(t%d)", dst, unary_ops[k].name, src);
    finish(r, unary_ops[k].fn(r->slot[src]), unary_ops[k].name, dst, -1, false);
}

typedef lt_tensor *(*binary_fn)(lt_tensor *, lt_tensor *);
static const struct { const char *name; binary_fn fn; } binary_ops[] = {
    {"lt_add", lt_add},       {"lt_sub", lt_sub},       {"lt_mul", lt_mul},         {"lt_div", lt_div},
    {"lt_pow", lt_pow},       {"lt_maximum", lt_maximum}, {"lt_minimum", lt_minimum}, {"lt_remainder", lt_remainder},
    {"lt_eq", lt_eq},         {"lt_ne", lt_ne},         {"lt_lt", lt_lt},           {"lt_le", lt_le},
    {"lt_logical_and", lt_logical_and}, {"lt_logical_or", lt_logical_or},
};
#define NBINARY ((int)(sizeof binary_ops / sizeof binary_ops[0]))

static void op_binary(prog_run *r)
{
    int dst = pick_dst(r), a = pick_src(r), b = pick_src(r), k = prog_byte(r) % (NBINARY + 1);
    double alpha = decode_scalar(r);
    if (a < 0)
        return;
    lt_tensor *t;
    if (k == NBINARY) {
        t = lt_add_scaled(r->slot[a], r->slot[b], alpha);
        say(r, "t%d = lt_add_scaled(t%d, t%d, %g)", dst, a, b, alpha);
    } else {
        t = binary_ops[k].fn(r->slot[a], r->slot[b]);
        say(r, "t%d = %s(t%d, t%d)", dst, binary_ops[k].name, a, b);
    }
    finish(r, t, "binary op", dst, -1, false);
}

typedef lt_tensor *(*scalar_fn)(lt_tensor *, double);
static const struct { const char *name; scalar_fn fn; } scalar_ops[] = {
    {"lt_add_scalar", lt_add_scalar},   {"lt_sub_scalar", lt_sub_scalar},     {"lt_rsub_scalar", lt_rsub_scalar},
    {"lt_mul_scalar", lt_mul_scalar},   {"lt_div_scalar", lt_div_scalar},     {"lt_pow_scalar", lt_pow_scalar},
    {"lt_rpow_scalar", lt_rpow_scalar}, {"lt_maximum_scalar", lt_maximum_scalar},
    {"lt_minimum_scalar", lt_minimum_scalar}, {"lt_remainder_scalar", lt_remainder_scalar},
    {"lt_eq_scalar", lt_eq_scalar},     {"lt_ne_scalar", lt_ne_scalar},       {"lt_lt_scalar", lt_lt_scalar},
    {"lt_le_scalar", lt_le_scalar},     {"lt_gt_scalar", lt_gt_scalar},       {"lt_ge_scalar", lt_ge_scalar},
};
#define NSCALAR ((int)(sizeof scalar_ops / sizeof scalar_ops[0]))

static void op_scalar(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r), k = prog_byte(r) % (NSCALAR + 1);
    double s = decode_scalar(r), hi = decode_scalar(r);
    if (src < 0)
        return;
    lt_tensor *t;
    if (k == NSCALAR) {
        t = lt_clamp(r->slot[src], s, hi);
        say(r, "t%d = lt_clamp(t%d, %g, %g)", dst, src, s, hi);
    } else {
        t = scalar_ops[k].fn(r->slot[src], s);
        say(r, "t%d = %s(t%d, %g)", dst, scalar_ops[k].name, src, s);
    }
    finish(r, t, "scalar op", dst, -1, false);
}

/* With F_CAST skipped, a floating tensor about to be converted to an
 * integer dtype first has NaN replaced by 0 and is clamped to a range
 * every integer dtype holds. Returns a new reference (or NULL). */
lt_tensor *cast_source(prog_run *r, lt_tensor *t, lt_dtype to)
{
    if (!(r->skip & F_CAST) || !lt_dtype_is_floating(lt_tensor_dtype(t)) || lt_dtype_is_floating(to) ||
        to == LT_BOOL)
        return lt_retain(t);
    lt_tensor *nan = lt_ne(t, t);
    lt_tensor *no_nan = lt_masked_fill(t, nan, 0);
    lt_tensor *c = lt_clamp(no_nan, to == LT_U8 ? 0 : -100, 100);
    say(r, "/* F_CAST: source made finite and in range */ ");
    lt_release(nan);
    lt_release(no_nan);
    return c;
}

static void op_cast(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r), k = prog_byte(r) % 12;
    lt_dtype dt = decode_dtype(r);
    if (src < 0)
        return;
    lt_tensor *t = NULL, *x = r->slot[src];
    if (k < 8) {
        lt_tensor *c = cast_source(r, x, dt);
        t = lt_to_dtype(c, dt);
        lt_release(c);
        say(r, "t%d = lt_to_dtype(t%d, %s)", dst, src, dtype_c(dt));
    } else if (k < 10) {
        t = lt_clone(x), say(r, "t%d = lt_clone(t%d)", dst, src);
    } else if (k == 10) {
        t = lt_contiguous(x), say(r, "t%d = lt_contiguous(t%d)", dst, src);
    } else {
        t = lt_to(x, r->dev), say(r, "t%d = lt_to(t%d, dev)", dst, src);
    }
    finish(r, t, "conversion", dst, -1, false);
}

/* ---- reductions ------------------------------------------------------------------------- */

/* True when a reduction over dims (ndims 0: all) covers no element. */
static bool empty_reduction(lt_tensor *t, const int *dims, int ndims)
{
    if (lt_tensor_numel(t) == 0 && ndims == 0)
        return true;
    for (int i = 0; i < ndims; i++) {
        int d = dims[i] < 0 ? dims[i] + ND(t) : dims[i];
        if (d >= 0 && d < ND(t) && SIZE(t, d) == 0)
            return true;
    }
    return false;
}

static void op_reduce(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r), k = prog_byte(r) % 10, ndims = prog_byte(r) % 3;
    bool keep = prog_byte(r) & 1;
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src];
    int dims[2];
    for (int i = 0; i < ndims; i++)
        dims[i] = decode_dim(r, ND(x));
    if ((r->skip & F_EMPTY_REDUCE) && empty_reduction(x, dims, ndims))
        return;
    if ((k == 3 || k == 4 || k == 7) && skip_extremum(r, x))
        return;
    static const char *const names[10] = {"lt_sum", "lt_mean", "lt_prod", "lt_amax", "lt_amin",
                                          "lt_all", "lt_any",  "lt_logsumexp", "lt_var", "lt_std"};
    lt_tensor *t = NULL;
    switch (k) {
    case 0: t = lt_sum(x, dims, ndims, keep); break;
    case 1: t = lt_mean(x, dims, ndims, keep); break;
    case 2: t = lt_prod(x, dims, ndims, keep); break;
    case 3: t = lt_amax(x, dims, ndims, keep); break;
    case 4: t = lt_amin(x, dims, ndims, keep); break;
    case 5: t = lt_all(x, dims, ndims, keep); break;
    case 6: t = lt_any(x, dims, ndims, keep); break;
    case 7: t = lt_logsumexp(x, dims, ndims, keep); break;
    case 8: t = lt_var(x, dims, ndims, keep, keep); break;
    default: t = lt_std(x, dims, ndims, 1, keep); break;
    }
    say(r, "t%d = %s(t%d, (int[]){%d, %d}, %d, %s)", dst, names[k], src, ndims > 0 ? dims[0] : 0,
        ndims > 1 ? dims[1] : 0, ndims, keep ? "true" : "false");
    if (k == 8)
        say(r, " /* correction %d */", keep);
    finish(r, t, names[k], dst, -1, false);
}

static void op_rowwise(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r), k = prog_byte(r) % 8;
    uint8_t arg = prog_byte(r);
    if (src < 0)
        return;
    lt_tensor *x = r->slot[src], *t = NULL;
    int dim = (int)(arg % (uint8_t)(ND(x) + 2)) - 1;
    bool keep = arg & 0x80;
    int dims[1] = {dim};
    if ((r->skip & F_EMPTY_REDUCE) && k <= 2 && empty_reduction(x, dims, 1))
        return;
    if (k <= 4 && skip_extremum(r, x))
        return;
    static const char *const names[8] = {"lt_argmax", "lt_argmin",      "lt_max_dim", "lt_softmax",
                                         "lt_log_softmax", "lt_cumsum", "lt_tril",    "lt_triu"};
    lt_tensor *idx = NULL;
    switch (k) {
    case 0: t = lt_argmax(x, dim, keep); break;
    case 1: t = lt_argmin(x, dim, keep); break;
    case 2: t = lt_max_dim(x, dim, keep, &idx); break;
    case 3: t = lt_softmax(x, dim); break;
    case 4: t = lt_log_softmax(x, dim); break;
    case 5: t = lt_cumsum(x, dim); break;
    case 6: t = lt_tril(x, dim); break;
    default: t = lt_triu(x, dim); break;
    }
    lt_release(idx);
    if (k <= 2)
        say(r, "t%d = %s(t%d, %d, %s%s)", dst, names[k], src, dim, keep ? "true" : "false", k == 2 ? ", &idx" : "");
    else
        say(r, "t%d = %s(t%d, %d)", dst, names[k], src, dim);
    finish(r, t, names[k], dst, -1, false);
}

/* ---- indexing --------------------------------------------------------------------------------- */

/* An i64 index of x's ndim whose sizes do not exceed x's and whose values
 * index dim (mostly in range). */
static lt_tensor *index_like(prog_run *r, lt_tensor *x, int dim)
{
    int n = ND(x);
    int64_t dims[LT_MAX_DIMS], numel = 1;
    for (int d = 0; d < n; d++) {
        dims[d] = (int64_t)(prog_byte(r) % (uint64_t)(SIZE(x, d) + 1));
        if ((r->skip & F_SIZE0) && dims[d] == 0)
            dims[d] = SIZE(x, d) > 0 ? 1 : 0;
        if (numel * dims[d] > MAX_NEW_NUMEL)
            dims[d] = 1;
        numel *= dims[d];
    }
    int nd = dim < 0 ? dim + n : dim;
    int64_t range = n > 0 && nd >= 0 && nd < n ? SIZE(x, nd) : 1;
    return tensor_from_bytes(r, LT_I64, dims, n, true, range);
}

static void op_gather(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r);
    uint8_t a = prog_byte(r);
    if (src < 0 || (r->skip & F_INDEX))
        return;
    lt_tensor *x = r->slot[src];
    int dim = (int)(a % (uint8_t)(ND(x) + 2)) - 1;
    say(r, "index = ");
    lt_tensor *index = index_like(r, x, dim);
    say(r, "; t%d = lt_gather(t%d, %d, index)", dst, src, dim);
    finish(r, lt_gather(x, dim, index), "gather", dst, -1, false);
    lt_release(index);
}

static void op_index_select(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r), k = prog_byte(r) % 3;
    uint8_t a = prog_byte(r);
    int64_t len = (int64_t)(prog_byte(r) % 5);
    if (src < 0 || (r->skip & F_INDEX))
        return;
    if ((r->skip & F_SIZE0) && len == 0)
        len = 1;
    lt_tensor *x = r->slot[src], *t;
    int dim = (int)(a % (uint8_t)(ND(x) + 2)) - 1;
    int nd = dim < 0 ? dim + ND(x) : dim;
    int64_t range = k == 1 ? (ND(x) > 0 ? SIZE(x, 0) : 1) : k == 2 ? a % 5 : ND(x) > 0 && nd < ND(x) ? SIZE(x, nd) : 1;
    say(r, "index = ");
    lt_tensor *index = tensor_from_bytes(r, LT_I64, &len, 1, true, range);
    if (k == 0)
        t = lt_index_select(x, dim, index), say(r, "; t%d = lt_index_select(t%d, %d, index)", dst, src, dim);
    else if (k == 1)
        t = lt_embedding(x, index), say(r, "; t%d = lt_embedding(t%d, index)", dst, src);
    else {
        int64_t classes = a >= 0xf0 ? decode_hostile(r) : a % 5;
        t = lt_one_hot(index, classes), say(r, "; t%d = lt_one_hot(index, %lld)", dst, (long long)classes);
    }
    finish(r, t, "index op", dst, -1, false);
    lt_release(index);
}

static void op_scatter(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r);
    uint8_t a = prog_byte(r);
    double value = decode_scalar(r);
    if (src < 0 || (r->skip & F_INDEX))
        return;
    lt_tensor *x = r->slot[src];
    int dim = (int)(a % (uint8_t)(ND(x) + 2)) - 1;
    bool add = a & 0x80;
    value = castable(r, value, lt_tensor_dtype(x));
    say(r, "index = ");
    lt_tensor *index = index_like(r, x, dim);
    lt_tensor *values = lt_full(lt_tensor_shape(index), ND(index), value, lt_tensor_dtype(x), r->dev);
    lt_tensor *t = add ? lt_scatter_add(x, dim, index, values) : lt_scatter(x, dim, index, values);
    say(r, "; values = lt_full(index's shape, %g, t%d's dtype, dev); t%d = %s(t%d, %d, index, values)", value, src,
        dst, add ? "lt_scatter_add" : "lt_scatter", src, dim);
    finish(r, t, "scatter", dst, -1, false);
    lt_release(index);
    lt_release(values);
}

static void op_matmul(prog_run *r)
{
    int dst = pick_dst(r), a = pick_src(r), b = pick_src(r);
    if (a < 0 || (r->skip & F_MATMUL))
        return;
    say(r, "t%d = lt_matmul(t%d, t%d)", dst, a, b);
    finish(r, lt_matmul(r->slot[a], r->slot[b]), "matmul", dst, -1, false);
}

static void op_cat(prog_run *r)
{
    int dst = pick_dst(r), a = pick_src(r), b = pick_src(r);
    uint8_t c = prog_byte(r);
    if (a < 0)
        return;
    lt_tensor *ts[2] = {r->slot[a], r->slot[b]};
    int dim = (int)(c % (uint8_t)(ND(ts[0]) + 3)) - 1;
    bool stack = c & 0x80;
    say(r, "t%d = %s((lt_tensor *[]){t%d, t%d}, 2, %d)", dst, stack ? "lt_stack" : "lt_cat", a, b, dim);
    finish(r, stack ? lt_stack(ts, 2, dim) : lt_cat(ts, 2, dim), "cat", dst, -1, false);
}

static void op_where(prog_run *r)
{
    int dst = pick_dst(r), c = pick_src(r), a = pick_src(r), b = pick_src(r);
    bool masked = prog_byte(r) & 1;
    double value = decode_scalar(r);
    if (c < 0)
        return;
    value = castable(r, value, lt_tensor_dtype(r->slot[a]));
    lt_tensor *cond = lt_gt_scalar(r->slot[c], 0);
    lt_tensor *t = masked ? lt_masked_fill(r->slot[a], cond, value) : lt_where(cond, r->slot[a], r->slot[b]);
    if (masked)
        say(r, "t%d = lt_masked_fill(t%d, lt_gt_scalar(t%d, 0), %g)", dst, a, c, value);
    else
        say(r, "t%d = lt_where(lt_gt_scalar(t%d, 0), t%d, t%d)", dst, c, a, b);
    finish(r, t, "where", dst, -1, false);
    lt_release(cond);
}

/* ---- lifetime, barriers, reads ------------------------------------------------------------------ */

static void op_release(prog_run *r)
{
    int s = pick_src(r);
    if (s < 0 || (r->skip & F_RELEASE))
        return;
    say(r, "lt_release(t%d); dead%d = t%d", s, r->ndead % NDEAD, s);
    lt_release(r->slot[s]);
    r->dead[r->ndead++ % NDEAD] = r->slot[s];
    r->slot[s] = NULL;
    r->res.status = LT_OK;
}

/* Any use of a released handle fails with LT_ERR_RELEASED, on every device. */
static void op_use_released(prog_run *r)
{
    uint8_t a = prog_byte(r), k = prog_byte(r) % 8;
    int live = pick_src(r);
    if (r->ndead == 0 || (r->skip & F_RELEASE))
        return;
    int n = r->ndead < NDEAD ? r->ndead : NDEAD, di = a % n;
    lt_tensor *d = r->dead[di], *other = live >= 0 ? r->slot[live] : d, *t = NULL;
    double v;
    unsigned char buf[8];
    static const char *const uses[8] = {"lt_item(dead, &v)", "lt_add_scalar(dead, 1)", "lt_add_(live, dead)",
                                        "lt_add_(dead, live)", "lt_view(dead, {-1}, 1)", "lt_release(dead)",
                                        "lt_copy_to_host(dead, buf, 8)", "lt_tensor_numel(dead)"};
    switch (k) {
    case 0: (void)lt_item(d, &v); break;
    case 1: t = lt_add_scalar(d, 1); break;
    case 2: t = lt_add_(other, d); break;
    case 3: t = lt_add_(d, other); break;
    case 4: t = lt_view(d, (int64_t[]){-1}, 1); break;
    case 5: lt_release(d); break;
    case 6: (void)lt_copy_to_host(d, buf, sizeof buf); break;
    default: FUZZ_CHECK(lt_tensor_numel(d) == -1, "numel of a released tensor"); break;
    }
    lt_status st = lt_last_status();
    say(r, "/* dead%d, live t%d */ %s", di, live, uses[k]);
    FUZZ_CHECK(!t && st == LT_ERR_RELEASED, "%s on a released tensor (dead%d) on the %s device gave %s, expected "
               "LT_ERR_RELEASED", uses[k], di, r->dev.kind == LT_DEVICE_LAZY ? "lazy" : "cpu", lt_status_name(st));
    r->res.status = st;
}

static void op_barrier(prog_run *r)
{
    int k = prog_byte(r) % 3;
    if (k == 2 && (r->skip & F_ASYNC))
        k = 1;
    lt_status st = k == 0 ? lt_mark_step() : lt_barrier(k == 1);
    say(r, "%s", k == 0 ? "lt_mark_step()" : k == 1 ? "lt_barrier(true)" : "lt_barrier(false)");
    r->res.status = fuzz_status_of(st == LT_OK, "barrier");
    r->res.barrier = true;
}

static void op_read(prog_run *r)
{
    int s = pick_src(r), k = prog_byte(r) % 4;
    if (s < 0)
        return;
    lt_tensor *t = r->slot[s];
    r->res.read = true;
    if (k == 0) {
        say(r, "lt_copy_to_host(t%d, buf, cap)", s);
        r->res.status = prog_read(t, &r->res.values);
        return;
    }
    if (k == 1) { /* to the cpu device (a sync on lazy), then the values */
        say(r, "host = lt_to(t%d, lt_device_cpu()); lt_copy_to_host(host, buf, cap)", s);
        lt_tensor *host = lt_to(t, lt_device_cpu());
        r->res.status = fuzz_status_of(host != NULL, "to(cpu)");
        if (host) {
            FUZZ_CHECK(lt_tensor_device(host).kind == LT_DEVICE_CPU, "lt_to(cpu) gave a tensor on another device");
            r->res.status = prog_read(host, &r->res.values);
        }
        lt_release(host);
        return;
    }
    prog_values *v = &r->res.values;
    memset(v, 0, sizeof *v);
    v->numel = 1;
    v->v = malloc(sizeof(double));
    FUZZ_CHECK(v->v, "out of memory");
    lt_status st;
    if (k == 2) {
        st = lt_item(t, v->v);
    } else {
        int64_t i = 0;
        st = lt_item_int(t, &i);
        v->v[0] = (double)i;
    }
    say(r, "%s(t%d, &v)", k == 2 ? "lt_item" : "lt_item_int", s);
    r->res.status = fuzz_status_of(st == LT_OK, "item");
}

/* ---- fused expressions --------------------------------------------------------------------- */

/* A reshape of t to [numel / f, f] for a divisor f picked by b: splitting
 * and merging dims makes the compiler divide indices. */
static lt_tensor *reshape_split(lt_tensor *t, uint8_t b, char *call, size_t cap)
{
    int64_t n = lt_tensor_numel(t), f = 1;
    for (int64_t c = 2 + b % 5; n > 0 && c > 1; c--)
        if (n % c == 0) {
            f = c;
            break;
        }
    int64_t dims[2] = {n > 0 ? n / f : 0, f};
    snprintf(call, cap, "lt_reshape(%%s, (int64_t[]){%lld, %lld}, 2)", (long long)dims[0], (long long)dims[1]);
    return lt_reshape(t, dims, 2);
}

/* One link of a chain applied to t (a new reference in the open scope);
 * call receives the C of the call, with %s for its operand. */
static lt_tensor *chain_link(prog_run *r, lt_tensor *t, uint8_t k, char *call, size_t cap)
{
    uint8_t a = prog_byte(r);
    int other = pick_src(r);
    double s = decode_scalar(r);
    snprintf(call, cap, "%%s");
    if (!t) /* an earlier link failed: keep its error */
        return NULL;
    int nd = ND(t) > 0 ? ND(t) : 1, dim = (int)(a % nd) - (a & 0x80 ? nd : 0);
    int u = a % (int)(sizeof unary_ops / sizeof unary_ops[0]), sc = a % NSCALAR, bi = a % NBINARY;
    switch (k % 8) {
    case 0: snprintf(call, cap, "%s(%%s)", unary_ops[u].name); return unary_ops[u].fn(t);
    case 1: snprintf(call, cap, "%s(%%s, %g)", scalar_ops[sc].name, s); return scalar_ops[sc].fn(t, s);
    case 2: snprintf(call, cap, "%s(t%d, %%s)", binary_ops[bi].name, other); return binary_ops[bi].fn(r->slot[other], t);
    case 3: snprintf(call, cap, "lt_transpose(%%s, 0, -1)"); return lt_transpose(t, 0, -1);
    case 4: return reshape_split(t, a, call, cap);
    case 5:
        if ((a & 0x40) && skip_extremum(r, t))
            return NULL; /* the chain is left out */
        snprintf(call, cap, "%s(%%s, (int[]){%d}, 1, %s)", a & 0x40 ? "lt_amax" : "lt_sum", dim, a & 1 ? "true" : "false");
        return a & 0x40 ? lt_amax(t, &dim, 1, a & 1) : lt_sum(t, &dim, 1, a & 1);
    case 6: snprintf(call, cap, "lt_narrow(%%s, %d, 1, %d)", dim, a % 3); return lt_narrow(t, dim, 1, a % 3);
    default: snprintf(call, cap, "lt_flatten(%%s, 0, -1)"); return lt_flatten(t, 0, -1);
    }
}

/* dst = link_n(...link_1(src)): every intermediate is released before the
 * next barrier, so the compiled backend fuses the chain into one kernel
 * (through reshapes, transposes, broadcasts and reductions). */
static void op_chain(prog_run *r)
{
    int dst = pick_dst(r), src = pick_src(r), n = 1 + prog_byte(r) % 4;
    uint8_t links[4];
    for (int i = 0; i < n; i++)
        links[i] = prog_byte(r);
    if (src < 0)
        return;
    char expr[1024], call[160], next[1024];
    snprintf(expr, sizeof expr, "t%d", src);
    lt_scope_begin();
    lt_tensor *t = r->slot[src];
    for (int i = 0; i < n; i++) {
        t = chain_link(r, t, links[i], call, sizeof call);
        snprintf(next, sizeof next, call, expr); /* call is ours: "...%s..." */
        memcpy(expr, next, sizeof expr);
    }
    lt_keep(t);
    lt_scope_end();
    if (r->res.skipped) {
        lt_release(t);
        return;
    }
    say(r, "t%d = %s /* intermediates released */", dst, expr);
    /* A chain of views only (transpose, reshape, narrow, flatten) may
     * share src's storage: it joins src's family, as a view. */
    bool views_only = true;
    for (int i = 0; i < n; i++)
        views_only &= links[i] % 8 == 3 || links[i] % 8 == 4 || links[i] % 8 >= 6;
    finish(r, t, "chain", dst, views_only ? r->family[src] : -1, views_only);
}

typedef void (*op_fn)(prog_run *r);
static const op_fn ops[P_NUM_OPS] = {
    [P_NEW] = op_new,           [P_FACTORY] = op_factory,     [P_UNARY] = op_unary,
    [P_BINARY] = op_binary,     [P_SCALAR] = op_scalar,       [P_CAST] = op_cast,
    [P_REDUCE] = op_reduce,     [P_ROWWISE] = op_rowwise,     [P_NARROW] = op_narrow,
    [P_SELECT] = op_select,     [P_PERMUTE] = op_permute,     [P_TRANSPOSE] = op_transpose,
    [P_RESHAPE] = op_reshape,   [P_EXPAND] = op_expand,       [P_SQUEEZE] = op_squeeze,
    [P_DIAGONAL] = op_diagonal, [P_SLICE] = op_slice,         [P_INPLACE] = op_inplace,
    [P_INPLACE_SCALAR] = op_inplace_scalar, [P_GATHER] = op_gather, [P_INDEX_SELECT] = op_index_select,
    [P_SCATTER] = op_scatter,   [P_MATMUL] = op_matmul,       [P_CAT] = op_cat,
    [P_WHERE] = op_where,       [P_RELEASE] = op_release,     [P_USE_RELEASED] = op_use_released,
    [P_BARRIER] = op_barrier,   [P_READ] = op_read,           [P_CHAIN] = op_chain,
};

/* Op byte -> op: a weighted table, so in-place ops, reads and barriers
 * (where the lazy device keeps the most state) come up more often. */
static const struct { int op, weight; } op_weights[] = {
    {P_NEW, 3},     {P_FACTORY, 1}, {P_UNARY, 1},   {P_BINARY, 3},   {P_SCALAR, 1},       {P_CAST, 1},
    {P_REDUCE, 3},  {P_ROWWISE, 2}, {P_NARROW, 2},  {P_SELECT, 2},   {P_PERMUTE, 2},      {P_TRANSPOSE, 2},
    {P_RESHAPE, 2}, {P_EXPAND, 2},  {P_SQUEEZE, 2}, {P_DIAGONAL, 1}, {P_SLICE, 2},        {P_INPLACE, 5},
    {P_INPLACE_SCALAR, 4}, {P_GATHER, 1}, {P_INDEX_SELECT, 1}, {P_SCATTER, 1}, {P_MATMUL, 2}, {P_CAT, 1},
    {P_WHERE, 1},   {P_RELEASE, 2}, {P_USE_RELEASED, 2}, {P_BARRIER, 3}, {P_READ, 4},
    {P_CHAIN, 5},
};

int prog_op_of_byte(uint8_t b)
{
    int k = b % OP_BYTES;
    for (size_t i = 0; i < sizeof op_weights / sizeof op_weights[0]; i++) {
        if (k < op_weights[i].weight)
            return op_weights[i].op;
        k -= op_weights[i].weight;
    }
    return P_READ; /* not reached: the weights add up to OP_BYTES */
}

uint8_t prog_byte_of_op(int op)
{
    int b = 0;
    for (size_t i = 0; i < sizeof op_weights / sizeof op_weights[0] && op_weights[i].op != op; i++)
        b += op_weights[i].weight;
    return (uint8_t)b;
}

void prog_step(prog_run *r)
{
    memset(&r->res, 0, sizeof r->res);
    r->res.same_as = -1;
    r->res.dst = -1;
    r->res.op = prog_op_of_byte(prog_byte(r));
    lt_clear_error();
    r->res.status = LT_OK;
    ops[r->res.op](r);
    say_end(r);
}
