/*
 * program_decode.c - fuzz_program's argument decoding (bytes to dtypes,
 * shapes, dims, element values and scalars), slot bookkeeping, host reads
 * and the step trace printed with FUZZ_PROGRAM_TRACE=1.
 */
#include "program_internal.h"

#include <math.h>

uint8_t prog_byte(prog_run *r)
{
    if (r->pos < r->len)
        return r->bytes[r->pos++];
    r->pos = r->len + 1; /* read past the end: the program is over */
    return 0;
}

bool prog_done(const prog_run *r) { return r->pos >= r->len; }

/* ---- trace ----------------------------------------------------------------------- */

static char trace_line[8192];
static size_t trace_len;

void say(prog_run *r, const char *fmt, ...)
{
    if (!r->trace || trace_len >= sizeof trace_line)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(trace_line + trace_len, sizeof trace_line - trace_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        trace_len += (size_t)n;
}

void say_end(prog_run *r)
{
    if (!r->trace || trace_len == 0)
        return;
    const step_result *s = &r->res;
    char shape[160] = "";
    if (s->made) {
        size_t n = (size_t)snprintf(shape, sizeof shape, " %s[", lt_dtype_name(s->dt));
        for (int d = 0; d < s->ndim && n < sizeof shape; d++)
            n += (size_t)snprintf(shape + n, sizeof shape - n, d ? ",%lld" : "%lld", (long long)s->shape[d]);
        if (n < sizeof shape)
            snprintf(shape + n, sizeof shape - n, "]");
    }
    fprintf(stderr, "    %s /* %s%s */\n", trace_line, lt_status_name(s->status), shape);
    trace_len = 0;
    trace_line[0] = '\0';
}

/* ---- decoding --------------------------------------------------------------------- */

static const lt_dtype dtype_table[10] = {LT_F32, LT_F32, LT_F32, LT_F64, LT_I32,
                                        LT_I64, LT_BOOL, LT_F16, LT_BF16, LT_U8};

lt_dtype decode_dtype(prog_run *r) { return dtype_table[prog_byte(r) % 10]; }

const char *dtype_c(lt_dtype dt)
{
    static const char *const names[] = {"LT_F32", "LT_F64", "LT_I32", "LT_I64",
                                        "LT_U8",  "LT_BOOL", "LT_BF16", "LT_F16"};
    return dt >= 0 && dt < LT_NUM_DTYPES ? names[dt] : "LT_NUM_DTYPES";
}

int64_t decode_size(prog_run *r)
{
    static const int64_t sizes[8] = {1, 2, 3, 4, 0, 1, 2, 3};
    int64_t s = sizes[prog_byte(r) % 8];
    return s == 0 && (r->skip & F_SIZE0) ? 1 : s;
}

int decode_shape(prog_run *r, int64_t *dims)
{
    int ndim = prog_byte(r) % 4;
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        dims[d] = decode_size(r);
        if (numel * dims[d] > MAX_NEW_NUMEL)
            dims[d] = 1;
        numel *= dims[d];
    }
    return ndim;
}

int decode_dim(prog_run *r, int ndim) { return (int)(prog_byte(r) % (uint8_t)(ndim + 2)) - 1; }

int64_t decode_index(prog_run *r, int64_t size)
{
    uint8_t b = prog_byte(r);
    if (r->skip & F_BAD_INDEX)
        return size > 0 ? (int64_t)(b % (uint64_t)size) : 0;
    return (int64_t)(b % (uint64_t)(size + 2)) - 1;
}

/* Sizes, starts and offsets no tensor can have: they must be refused
 * cleanly (no overflow, no huge allocation attempted). 2^40 elements are
 * more than any machine's memory; products of two of these overflow. */
int64_t decode_hostile(prog_run *r)
{
    static const int64_t values[8] = {INT64_MAX, INT64_MIN, (int64_t)1 << 62, (int64_t)1 << 40,
                                      -((int64_t)1 << 62), (int64_t)1 << 59, INT64_MAX - 1, -1};
    return values[prog_byte(r) % 8];
}

static const double scalar_table[16] = {0, 1, -1, 2, 0.5, -2.5, 3, 4, -0.0, NAN, INFINITY, -INFINITY, 1e30, 1e-30, 7, 100};

double decode_scalar(prog_run *r) { return scalar_table[prog_byte(r) % 16]; }

/* A value that can be stored in dt without undefined behaviour when
 * casts are skipped. */
double castable(prog_run *r, double v, lt_dtype dt)
{
    if (!(r->skip & F_CAST) || lt_dtype_is_floating(dt) || dt == LT_BOOL)
        return v;
    if (!isfinite(v) || v < (dt == LT_U8 ? 0 : -1000) || v > 1000)
        return 0;
    return v;
}

double decode_element(prog_run *r, lt_dtype dt)
{
    static const double special[8] = {NAN, INFINITY, -INFINITY, -0.0, 1e30, 65504, 1e-8, 3e38};
    uint8_t b = prog_byte(r);
    switch (dt) {
    case LT_BOOL: return b & 1;
    case LT_U8: return b % 10;
    case LT_I32:
    case LT_I64: return (double)(b % 19) - 9;
    default: return b >= 248 ? special[b - 248] : ((double)(b % 33) - 16) * 0.5;
    }
}

/* Stores v as one element of dt at p. */
void store_element(void *p, lt_dtype dt, double v)
{
    switch (dt) {
    case LT_F32: *(float *)p = (float)v; break;
    case LT_F64: *(double *)p = v; break;
    case LT_I32: *(int32_t *)p = (int32_t)v; break;
    case LT_I64: *(int64_t *)p = (int64_t)v; break;
    case LT_U8: *(uint8_t *)p = (uint8_t)v; break;
    case LT_BOOL: *(bool *)p = v != 0; break;
    case LT_BF16: *(uint16_t *)p = lt_f32_to_bf16((float)v); break;
    case LT_F16: *(uint16_t *)p = lt_f32_to_f16((float)v); break;
    default: break;
    }
}

static double load_element(const unsigned char *p, lt_dtype dt)
{
    switch (dt) {
    case LT_F32: { float v; memcpy(&v, p, 4); return v; }
    case LT_F64: { double v; memcpy(&v, p, 8); return v; }
    case LT_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case LT_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case LT_U8: return *p;
    case LT_BOOL: return *p != 0;
    case LT_BF16: { uint16_t v; memcpy(&v, p, 2); return lt_bf16_to_f32(v); }
    case LT_F16: { uint16_t v; memcpy(&v, p, 2); return lt_f16_to_f32(v); }
    default: return NAN;
    }
}

/* ---- slots ------------------------------------------------------------------------ */

int pick_src(prog_run *r)
{
    uint8_t b = prog_byte(r);
    for (int i = 0; i < NSLOTS; i++) {
        int s = (b + i) % NSLOTS;
        if (r->slot[s])
            return s;
    }
    return -1;
}

int pick_dst(prog_run *r) { return prog_byte(r) % NSLOTS; }

/* Records a step's outcome: the new tensor t (or NULL on failure) for slot
 * dst, in `family` (a new one if < 0), as a view of it or not. */
void finish(prog_run *r, lt_tensor *t, const char *what, int dst, int family, bool view)
{
    step_result *s = &r->res;
    s->dst = dst;
    s->status = fuzz_status_of(t != NULL, what);
    if (!t)
        return;
    for (int i = 0; i < NSLOTS; i++)
        if (r->slot[i] == t) { /* the op returned an operand (one more reference) */
            s->same_as = i;
            lt_release(t);
            return;
        }
    if (lt_tensor_numel(t) > MAX_NUMEL) {
        s->dropped = true;
        lt_release(t);
        return;
    }
    s->made = true;
    s->dt = lt_tensor_dtype(t);
    s->ndim = lt_tensor_ndim(t);
    memcpy(s->shape, lt_tensor_shape(t), sizeof(int64_t) * (size_t)s->ndim);
    memcpy(s->strides, lt_tensor_strides(t), sizeof(int64_t) * (size_t)s->ndim);
    lt_release(r->slot[dst]);
    r->slot[dst] = t;
    r->family[dst] = family >= 0 ? family : r->next_family++;
    r->is_view[dst] = view;
}

/* Records an in-place step on slot dst (t: its result, dst or NULL). */
void finish_inplace(prog_run *r, lt_tensor *t, const char *what, int dst)
{
    r->res.dst = dst;
    r->res.inplace = true;
    r->res.status = fuzz_status_of(t != NULL, what);
    FUZZ_CHECK(!t || t == r->slot[dst], "%s returned a tensor other than its destination", what);
}

bool has_zero_stride(lt_tensor *t)
{
    for (int d = 0; d < lt_tensor_ndim(t); d++)
        if (lt_tensor_strides(t)[d] == 0 && lt_tensor_shape(t)[d] > 1)
            return true;
    return false;
}

bool skip_extremum(prog_run *r, lt_tensor *x)
{
    if (!(r->skip & F_INF_EXTREMUM))
        return false;
    if (r->dev.kind == LT_DEVICE_LAZY)
        return r->res.skipped = r->force_skip;
    prog_values v;
    bool inf = false;
    if (x && prog_read(x, &v) == LT_OK)
        for (int64_t i = 0; i < v.numel; i++)
            inf |= isinf(v.v[i]) != 0;
    prog_values_free(&v);
    lt_clear_error();
    if (inf)
        say(r, "/* left out (inf_extremum): */ ");
    return r->res.skipped = inf;
}

void prog_release_all(prog_run *r)
{
    for (int i = 0; i < NSLOTS; i++) {
        lt_release(r->slot[i]);
        r->slot[i] = NULL;
    }
}

/* ---- host reads --------------------------------------------------------------------- */

lt_status prog_read(lt_tensor *t, prog_values *out)
{
    memset(out, 0, sizeof *out);
    out->dt = lt_tensor_dtype(t);
    out->ndim = lt_tensor_ndim(t);
    if (out->ndim < 0)
        return fuzz_status_of(false, "reading a tensor's metadata");
    memcpy(out->shape, lt_tensor_shape(t), sizeof(int64_t) * (size_t)out->ndim);
    out->numel = lt_tensor_numel(t);
    size_t esize = lt_dtype_size(out->dt);
    size_t cap = (size_t)out->numel * esize;
    unsigned char *raw = malloc(cap ? cap : 1);
    out->v = malloc(sizeof(double) * (size_t)(out->numel ? out->numel : 1));
    FUZZ_CHECK(raw && out->v, "out of memory");
    lt_clear_error();
    lt_status st = lt_copy_to_host(t, raw, cap);
    st = fuzz_status_of(st == LT_OK, "copy_to_host");
    for (int64_t i = 0; st == LT_OK && i < out->numel; i++)
        out->v[i] = load_element(raw + (size_t)i * esize, out->dt);
    free(raw);
    return st;
}

void prog_values_free(prog_values *v)
{
    free(v->v);
    v->v = NULL;
}
